package appleidmock

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// forge signs claims with a key of our own under kid.
func forge(t *testing.T, kid string, claims Object) string {
	t.Helper()
	key := must(rsa.GenerateKey(rand.Reader, 2048))(t)
	header := must(json.Marshal(Object{"kid": kid, "alg": "RS256"}))(t)
	body := must(json.Marshal(claims))(t)
	input := b64(header) + "." + b64(body)
	digest := sha256.Sum256([]byte(input))
	return input + "." + b64(must(rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:]))(t))
}

func genuine(t *testing.T, mock *Mock, fields Object) string {
	t.Helper()
	all := Object{"kind": "notification", "type": "consent-revoked"}
	for name, value := range fields {
		all[name] = value
	}
	answer := must(mock.Token("alice", app, all))(t)
	if payload, ok := answer["payload"].(string); ok {
		return payload
	}
	return answer["token"].(string)
}

func deliver(t *testing.T, url, method, body string) (int, Object) {
	t.Helper()
	request := must(http.NewRequest(method, url, strings.NewReader(body)))(t)
	response := must(http.DefaultClient.Do(request))(t)
	defer response.Body.Close()
	var answer Object
	_ = json.Unmarshal(must(io.ReadAll(response.Body))(t), &answer)
	return response.StatusCode, answer
}

func envelope(t *testing.T, payload string) string {
	return string(must(json.Marshal(Object{"payload": payload}))(t))
}

func TestReceiver_TakesAGenuineNotification_AndRefusesEachForgerySayingWhy(t *testing.T) {
	mock := shared(t)
	receiver := mock.Notifications
	real := genuine(t, mock, nil)
	var claims Object
	decodePart(strings.Split(real, ".")[1], &claims)
	var events Object
	_ = json.Unmarshal([]byte(claims["events"].(string)), &events)
	kid := must(mock.Health())(t)["active_kid"].(string)
	wrongAudience := Object{}
	for name, value := range claims {
		wrongAudience[name] = value
	}
	wrongAudience["aud"] = "com.attacker.app"
	iat, _ := claims["iat"].(float64)
	for _, c := range []struct {
		name, body, reason, prefix string
	}{
		{name: "genuine", body: envelope(t, real)},
		{name: "signed by another key", body: envelope(t, forge(t, kid, claims)), reason: "the RS256 signature does not verify under " + kid},
		{name: "wrong issuer", body: envelope(t, genuine(t, mock, Object{"defect": "wrong-issuer"})), reason: `iss is "https://appleid.apple.com.attacker.example", not "https://appleid.apple.com"`},
		{name: "unknown kid", body: envelope(t, forge(t, "nope", wrongAudience)), reason: `kid "nope" is not published at /auth/keys`},
		{name: "not a token", body: envelope(t, "not.a.token"), reason: "the token's header is not base64url JSON"},
		{name: "no payload", body: `{"payload": 5}`, reason: "the body has no payload string"},
		{name: "over a MiB", body: strings.Repeat("x", 1<<20+1), reason: "the body is over 1048576 bytes"},
		// Signed by the mock, each with one claim a careful backend refuses.
		{name: "another audience", body: envelope(t, genuine(t, mock, Object{"claims": Object{"aud": "com.attacker.app"}})),
			reason: `aud "com.attacker.app" is none of the scenario's clients`},
		{name: "HS256", body: envelope(t, genuine(t, mock, Object{"defect": "hs256-public-key"})), reason: `alg is "HS256", not RS256`},
		{name: "events without a type", body: envelope(t, genuine(t, mock, Object{"claims": Object{"events": `{"sub":"x"}`}})),
			reason: `the events claim {"sub":"x"} has no type`},
		{name: "issued in the future", body: envelope(t, genuine(t, mock, Object{"claims": Object{"iat": int64(iat) + 86400}})),
			prefix: fmt.Sprintf("iat %d is after the mock's clock (", int64(iat)+86400)},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, answer := deliver(t, receiver.URL, "POST", c.body)
			if c.prefix != "" {
				message, _ := answer["error"].(string)
				if status != 400 || !strings.HasPrefix(message, c.prefix) {
					t.Fatalf("%d %v, want 400 starting %q", status, answer, c.prefix)
				}
				if _, err := receiver.Next(5 * time.Second); err == nil || err.Error() != "a notification failed verification: "+message {
					t.Fatalf("Next: %v", err)
				}
				return
			}
			if c.reason == "" {
				notification := must(receiver.Next(5 * time.Second))(t)
				if status != 200 || !reflect.DeepEqual(answer, Object{"ok": true}) || notification.Type != "consent-revoked" || notification.Sub != events["sub"] {
					t.Fatalf("%d %v %+v", status, answer, notification)
				}
				return
			}
			if status != 400 || !reflect.DeepEqual(answer, Object{"error": c.reason}) {
				t.Fatalf("%d %v, want 400 %q", status, answer, c.reason)
			}
			_, err := receiver.Next(5 * time.Second)
			if err == nil || err.Error() != "a notification failed verification: "+c.reason {
				t.Fatalf("Next: %v", err)
			}
		})
	}
	if status, answer := deliver(t, receiver.URL, "GET", ""); status != 405 || answer["error"] != "GET is not POST" {
		t.Fatalf("GET: %d %v", status, answer)
	}
	_, err := receiver.Next(50 * time.Millisecond)
	if err == nil || !strings.HasPrefix(err.Error(), "no notification arrived at "+receiver.URL+" within 50ms") {
		t.Fatalf("Next with nothing sent: %v", err)
	}
}
