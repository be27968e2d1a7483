package example

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"testing"

	appleidmock "github.com/appleid-mock/appleid-mock/integrations/go"
)

func TestCallback(t *testing.T) {
	mock := appleidmock.Start(t, appleidmock.WithoutNotifications())
	backend := httptest.NewServer(Callback{Apple: mock.URL, ClientID: "com.example.web", RedirectURI: "https://app.example.com/callback",
		ClientSecret: func() (string, error) { return mock.ClientSecret("com.example.web", appleidmock.SecretOptions{}) }})
	t.Cleanup(backend.Close)
	callback := func(t *testing.T, form any) (int, map[string]any) {
		t.Helper()
		values := url.Values{}
		for name, value := range form.(map[string]any) {
			values.Set(name, value.(string))
		}
		response, err := http.PostForm(backend.URL, values)
		if err != nil {
			t.Fatal(err)
		}
		defer response.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(response.Body).Decode(&body)
		return response.StatusCode, body
	}
	delivered, err := mock.AuthorizeWeb("alice", appleidmock.Object{"response_mode": "form_post", "scope": "name email"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		status int
		check  func(map[string]any) bool
	}{
		{"signs the user in", 200, func(body map[string]any) bool {
			return body["email"] == "alice@example.com" && regexp.MustCompile(`^\d{6}\.[0-9a-f]{32}\.\d{4}$`).MatchString(body["sub"].(string))
		}},
		// The twin: Apple's codes work once, and the backend says so.
		{"refuses the same code again", 401, func(body map[string]any) bool {
			return reflect.DeepEqual(body, map[string]any{"error": "apple said invalid_grant"})
		}},
	} {
		if status, body := callback(t, delivered["form"]); status != c.status || !c.check(body) {
			t.Fatalf("%s: %d %v", c.name, status, body)
		}
	}
	// An id_token signed by a key /auth/keys does not publish, as Apple's endpoint would never send.
	forged, err := mock.Token("alice", "com.example.web", appleidmock.Object{"defect": "bad-signature"})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"id_token": forged["id_token"]})
	if _, err := mock.AddFault(appleidmock.Object{"path": "/auth/token", "times": 1, "action": "respond", "status": 200,
		"headers": map[string]any{"Content-Type": "application/json"}, "body": string(body)}); err != nil {
		t.Fatal(err)
	}
	again, _ := mock.AuthorizeWeb("alice", appleidmock.Object{"response_mode": "form_post"})
	if status, body := callback(t, again["form"]); status != 401 || body["error"] != "bad signature" {
		t.Fatalf("a forged id_token: %d %v", status, body)
	}
}
