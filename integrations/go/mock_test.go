package appleidmock

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

const app = "com.example.app"

var (
	sharedOnce sync.Once
	sharedMock *Mock
	sharedErr  error
)

// shared is one mock for the package's tests, reset before each; TestMain stops it.
func shared(t *testing.T) *Mock {
	t.Helper()
	sharedOnce.Do(func() { sharedMock, sharedErr = StartProcess() })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	if err := sharedMock.Reset(); err != nil {
		t.Fatal(err)
	}
	return sharedMock
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedMock != nil {
		if status, _ := sharedMock.Stop(); status != 0 && code == 0 {
			fmt.Fprintf(os.Stderr, "the shared mock stopped with status %d\n", status)
			code = 1
		}
	}
	os.Exit(code)
}

type answer struct {
	status int
	body   Object
	text   string
}

// post sends form fields to one of Apple's routes, as a backend does.
func post(t *testing.T, mock *Mock, path string, form url.Values) answer {
	t.Helper()
	response, err := http.PostForm(mock.URL+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	text, _ := io.ReadAll(response.Body)
	a := answer{status: response.StatusCode, text: string(text)}
	_ = json.Unmarshal(text, &a.body)
	return a
}

func exchange(t *testing.T, mock *Mock, code, secret string) answer {
	t.Helper()
	return post(t, mock, "/auth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {app}, "client_secret": {secret}})
}

// must(f())(t) is f's value, or the test fails with f's error.
func must[T any](value T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return value
	}
}

func code(t *testing.T, mock *Mock, user string) string {
	t.Helper()
	return must(mock.SignIn(user, app, nil))(t)["authorizationCode"].(string)
}

func secret(t *testing.T, mock *Mock, options SecretOptions) string {
	t.Helper()
	return must(mock.ClientSecret(app, options))(t)
}

// verified checks an id_token's RS256 signature against /auth/keys; answers its kid and claims.
func verified(t *testing.T, mock *Mock, token string) (string, Object) {
	t.Helper()
	parts := strings.Split(token, ".")
	var header struct{ Kid string }
	var claims Object
	if len(parts) != 3 || !decodePart(parts[0], &header) || !decodePart(parts[1], &claims) {
		t.Fatalf("not a JWS: %q", token)
	}
	response := must(http.Get(mock.URL + "/auth/keys"))(t)
	defer response.Body.Close()
	var keys struct{ Keys []struct{ Kid, N, E string } }
	if err := json.NewDecoder(response.Body).Decode(&keys); err != nil {
		t.Fatal(err)
	}
	for _, key := range keys.Keys {
		if key.Kid != header.Kid {
			continue
		}
		n, _ := base64.RawURLEncoding.DecodeString(key.N)
		e, _ := base64.RawURLEncoding.DecodeString(key.E)
		public := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		signature, _ := base64.RawURLEncoding.DecodeString(parts[2])
		digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
		if err := rsa.VerifyPKCS1v15(public, crypto.SHA256, digest[:], signature); err != nil {
			t.Fatalf("the id_token does not verify under %s: %v", key.Kid, err)
		}
		return header.Kid, claims
	}
	t.Fatalf("kid %q is not published", header.Kid)
	return "", nil
}

func pkcs8(t *testing.T, key any) string {
	t.Helper()
	der := must(x509.MarshalPKCS8PrivateKey(key))(t)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

func refusedWith(t *testing.T, err error, status int, message string) {
	t.Helper()
	var refusal *Error
	if !errors.As(err, &refusal) || refusal.Status != status || refusal.Message != message {
		t.Fatalf("got %#v, want an *Error %d %q", err, status, message)
	}
}

func TestSignIn_ExchangeVerifyRevoke_AndTheVerifiedNotificationArrives(t *testing.T) {
	mock := shared(t)
	credential := must(mock.SignIn("alice", app, nil))(t)
	if credential["email"] != "alice@example.com" {
		t.Fatalf("first sign-in: %v", credential)
	}
	tokens := exchange(t, mock, credential["authorizationCode"].(string), secret(t, mock, SecretOptions{}))
	if tokens.status != 200 {
		t.Fatalf("%d %s", tokens.status, tokens.text)
	}
	_, claims := verified(t, mock, tokens.body["id_token"].(string))
	if claims["aud"] != app || claims["iss"] != "https://appleid.apple.com" {
		t.Fatalf("claims %v", claims)
	}
	must(mock.FireEvent("consent-revoked", "alice", app))(t)
	notification := must(mock.Notifications.Next(30 * time.Second))(t)
	if notification.Type != "consent-revoked" || notification.Sub != claims["sub"] {
		t.Fatalf("notification %+v, sub %v", notification, claims["sub"])
	}
	// The twin: the code works once.
	again := exchange(t, mock, credential["authorizationCode"].(string), secret(t, mock, SecretOptions{}))
	if again.status != 400 || !reflect.DeepEqual(again.body, Object{"error": "invalid_grant", "error_description": "The code has already been used."}) {
		t.Fatalf("%d %s", again.status, again.text)
	}
}

func TestClientSecret_AcceptedOrRefused_WithTheMocksReason(t *testing.T) {
	other := pkcs8(t, must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))(t))
	for _, c := range []struct {
		name     string
		clientID string
		options  SecretOptions
		status   int    // of the exchange; 0 when ClientSecret itself refuses
		refusal  string // what Refusals says, or ClientSecret's error
	}{
		{name: "the built-in key", clientID: app, status: 200},
		{name: "Apple's longest lifetime", clientID: app, options: SecretOptions{Lifetime: MaxSecretLifetime}, status: 200},
		{name: "one second longer", clientID: app, options: SecretOptions{Lifetime: MaxSecretLifetime + time.Second},
			refusal: "ClientSecret: lifetime 4382h30m1s is outside 1s…4382h30m0s (Apple's six months)"},
		{name: "another key", clientID: app, options: SecretOptions{Key: other}, status: 400,
			refusal: "POST /auth/token 400 invalid_client — client_secret signature does not verify with key MOCKKEY001 of team MOCKTEAM01"},
		{name: "another client", clientID: "com.example.web", status: 400,
			refusal: "POST /auth/token 400 invalid_client — client_secret sub is com.example.web but client_id is com.example.app"},
		{name: "an RSA key", clientID: app, options: SecretOptions{Key: pkcs8(t, must(rsa.GenerateKey(rand.Reader, 1024))(t))},
			refusal: "ClientSecret: the key given: the key is *rsa.PrivateKey, not an EC P-256 key"},
		{name: "a key id without its key", clientID: app, options: SecretOptions{KeyID: "OTHERKEY01"},
			refusal: "ClientSecret: key OTHERKEY01 of team MOCKTEAM01 is not the built-in test key; pass Key (the path of its .p8, or its PEM)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			mock := shared(t)
			made, err := mock.ClientSecret(c.clientID, c.options)
			if c.status == 0 {
				if err == nil || err.Error() != c.refusal {
					t.Fatalf("got %v, want %q", err, c.refusal)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mark := mock.JournalMark()
			got := exchange(t, mock, code(t, mock, "alice"), made)
			if got.status != c.status {
				t.Fatalf("%d %s", got.status, got.text)
			}
			want := []string{}
			if c.refusal != "" {
				want = []string{c.refusal}
			}
			if refusals := mock.Refusals(mark); !reflect.DeepEqual(refusals, want) {
				t.Fatalf("refusals %q, want %q", refusals, want)
			}
		})
	}
}

func TestBuiltInKey_IsTheRepositorysTestKey(t *testing.T) {
	committed := must(os.ReadFile("../../Keys/AuthKey_MOCKKEY001.p8"))(t)
	if BuiltInKey != string(committed) {
		t.Fatal("the embedded key is not Keys/AuthKey_MOCKKEY001.p8")
	}
}

func TestAuthorizeWeb_DeliversAsAppleWould_AndAnUnknownResponseModeIsRefused(t *testing.T) {
	mock := shared(t)
	posted := must(mock.AuthorizeWeb("alice", Object{"response_mode": "form_post", "scope": "name email", "state": "s1"}))(t)
	form := posted["form"].(Object)
	if posted["method"] != "POST" || posted["url"] != "https://app.example.com/callback" || form["state"] != "s1" ||
		form["user"] != `{"name":{"firstName":"Alice","lastName":"Appleseed"},"email":"alice@example.com"}` {
		t.Fatalf("form_post: %v", posted)
	}
	// The twin: Apple sends the user only the first time.
	if again := must(mock.AuthorizeWeb("alice", Object{"response_mode": "form_post", "scope": "name email"}))(t); again["form"].(Object)["user"] != nil {
		t.Fatalf("second form_post: %v", again)
	}
	web := must(mock.AuthorizeWeb("alice", Object{"state": "s2"}))(t)
	if web["method"] != "GET" || !regexp.MustCompile(`^https://app\.example\.com/callback\?code=c[^&]+&state=s2$`).MatchString(web["url"].(string)) {
		t.Fatalf("query: %v", web)
	}
	popup := must(mock.AuthorizeWeb("alice", Object{"response_mode": "web_message", "state": "s3"}))(t)
	if popup["method"] != "postMessage" || popup["target_origin"] != "https://app.example.com" || !strings.Contains(popup["message"].(string), `"state":"s3"`) {
		t.Fatalf("web_message: %v", popup)
	}
	_, err := mock.AuthorizeWeb("alice", Object{"response_mode": "web_msg"})
	var refusal *Error
	if !errors.As(err, &refusal) || refusal.Status != 400 || !strings.HasSuffix(refusal.Message, "(field response_mode)") {
		t.Fatalf("got %v", err)
	}
}

func TestFaults_ActListAndClear_AnIncidentLastsItsMinutes(t *testing.T) {
	mock := shared(t)
	fault := must(mock.AddFault(Object{"path": "/auth/token", "times": 1, "action": "respond", "status": 503}))(t)
	if fault["id"] != "f1" || fault["remaining"] != 1.0 {
		t.Fatalf("fault %v", fault)
	}
	first := code(t, mock, "alice")
	for _, want := range []int{503, 200} {
		if got := exchange(t, mock, first, secret(t, mock, SecretOptions{})); got.status != want {
			t.Fatalf("%d, want %d: %s", got.status, want, got.text)
		}
	}
	faults := must(mock.Faults())(t)
	if len(faults) != 1 || faults[0]["fired"] != 1.0 || faults[0]["remaining"] != 0.0 {
		t.Fatalf("spent, it stays listed: %v", faults)
	}
	if removed := must(mock.ClearFaults(""))(t); removed != 1 {
		t.Fatalf("removed %d", removed)
	}
	_, err := mock.AddFault(Object{"path": "/__mock/reset", "action": "close"})
	if err == nil || !strings.HasSuffix(err.Error(), "(field path)") {
		t.Fatalf("a fault on a /__mock path: %v", err)
	}
	must(mock.Incident("token-endpoint-outage", 1))(t)
	later := code(t, mock, "alice")
	if got := exchange(t, mock, later, secret(t, mock, SecretOptions{})); got.status != 503 {
		t.Fatalf("during the outage: %d", got.status)
	}
	must(mock.AdvanceClock(61))(t)
	if got := exchange(t, mock, later, secret(t, mock, SecretOptions{IssuedAt: time.Now().Add(61 * time.Second)})); got.status != 200 {
		t.Fatalf("after the outage: %d %s", got.status, got.text)
	}
	if left := must(mock.Faults())(t); len(left) != 0 {
		t.Fatalf("the incident outlived its minute: %v", left)
	}
	_, err = mock.Incident("no-such-incident", 0)
	if err == nil || !regexp.MustCompile(`^POST /__mock/faults answered 400: .* \(field incident\)$`).MatchString(err.Error()) {
		t.Fatalf("an unknown incident: %v", err)
	}
}

func TestRotateKeys_AFreshKeySigns_AndTheReceiverFollowsIt(t *testing.T) {
	mock := shared(t)
	rotated := must(mock.RotateKeys())(t)
	if rotated["previous"] != "W2ek7HdPaL" {
		t.Fatalf("rotated %v", rotated)
	}
	tokens := exchange(t, mock, code(t, mock, "alice"), secret(t, mock, SecretOptions{}))
	if kid, _ := verified(t, mock, tokens.body["id_token"].(string)); kid != rotated["kid"] {
		t.Fatalf("signed by %s, not the fresh %v", kid, rotated["kid"])
	}
	must(mock.FireEvent("consent-revoked", "alice", app))(t)
	if notification := must(mock.Notifications.Next(30 * time.Second))(t); notification.Kid != rotated["kid"] {
		t.Fatalf("notification signed by %s", notification.Kid)
	}
}

func TestChangePassword_EndsTheRefreshToken_AndAnUnknownUserIsRefused(t *testing.T) {
	mock := shared(t)
	made := secret(t, mock, SecretOptions{})
	tokens := exchange(t, mock, code(t, mock, "alice"), made)
	refresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tokens.body["refresh_token"].(string)}, "client_id": {app}, "client_secret": {made}}
	if got := post(t, mock, "/auth/token", refresh); got.status != 200 {
		t.Fatalf("before: %d", got.status)
	}
	changed := must(mock.ChangePassword("alice"))(t)
	if !reflect.DeepEqual(changed, Object{"notification": nil, "notifications": []any{}, "type": "password-changed", "user": "alice"}) {
		t.Fatalf("changed %v", changed)
	}
	if got := post(t, mock, "/auth/token", refresh); got.status != 400 || !reflect.DeepEqual(got.body, Object{"error": "invalid_grant"}) {
		t.Fatalf("after: %d %s", got.status, got.text)
	}
	_, err := mock.ChangePassword("mallory")
	var refusal *Error
	if !errors.As(err, &refusal) || refusal.Status != 404 || !strings.HasSuffix(refusal.Message, "(field user)") {
		t.Fatalf("got %v", err)
	}
}

func TestReset_MakesTheNextSignInAFirstOne(t *testing.T) {
	mock := shared(t)
	for _, want := range []any{"alice@example.com", nil} {
		if got := must(mock.SignIn("alice", app, nil))(t)["email"]; got != want {
			t.Fatalf("email %v, want %v", got, want)
		}
	}
	if err := mock.Reset(); err != nil {
		t.Fatal(err)
	}
	if got := must(mock.SignIn("alice", app, nil))(t)["email"]; got != "alice@example.com" {
		t.Fatalf("after reset: %v", got)
	}
}

func TestRequests_TheJournalFiltered_AndARefusalCarriesReasonAndField(t *testing.T) {
	mock := shared(t)
	mark := fmt.Sprint(mock.JournalMark())
	must(mock.SignIn("bob", app, nil))(t)
	journal := must(mock.Requests(url.Values{"path": {"/__mock/sign-in"}, "after": {mark}}))(t)
	if len(journal) != 1 || journal[0]["method"] != "POST" || journal[0]["status"] != 200.0 {
		t.Fatalf("journal %v", journal)
	}
	if tokens := must(mock.Requests(url.Values{"path": {"/auth/token"}, "after": {mark}}))(t); len(tokens) != 0 {
		t.Fatalf("no exchange happened: %v", tokens)
	}
	_, err := mock.SignIn("nobody", app, nil)
	refusedWith(t, err, 400, `POST /__mock/sign-in answered 400: no user "nobody" in the scenario (field user)`)
}

func TestAttach_DrivesARunningMock_AndNothingListeningIsNamed(t *testing.T) {
	mock := shared(t)
	attached := Attach(t, mock.URL)
	if got := must(attached.SignIn("alice", app, nil))(t)["email"]; got != "alice@example.com" {
		t.Fatalf("email %v", got)
	}
	_, err := AttachURL("http://127.0.0.1:9", Timeout(200*time.Millisecond))
	if err == nil || !strings.HasPrefix(err.Error(), `http://127.0.0.1:9 did not answer /__mock/health within 200ms: GET http://127.0.0.1:9/__mock/health: Get "http://127.0.0.1:9/__mock/health": dial tcp 127.0.0.1:9: connect: connection refused`) {
		t.Fatalf("got %v", err)
	}
	if _, err := AttachURL("127.0.0.1:8080"); err == nil || err.Error() != `the mock's url "127.0.0.1:8080" is not an http:// or https:// URL` {
		t.Fatalf("got %v", err)
	}
}

func TestStart_ARefusedScenarioFailsWithTheMocksWords_AndLeavesNothingRunning(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	_, err := StartProcess(Scenario(Object{"teams": 5}))
	if err == nil || !strings.HasPrefix(err.Error(), "appleid-mock serve exited 2 before listening") || !strings.Contains(err.Error(), "teams") {
		t.Fatalf("got %v", err)
	}
	if left := processesNaming(tmp); len(left) != 0 {
		t.Fatalf("still running: %v", left)
	}
	// The twin: the mock's own scenario is served, and without a receiver.
	served := Start(t, ScenarioFile(writeScenario(t)), WithoutNotifications())
	if served.Notifications != nil || must(served.Health())(t)["status"] != "ok" {
		t.Fatalf("served %+v", served)
	}
}

func writeScenario(t *testing.T) string {
	t.Helper()
	binary := must(FindBinary(""))(t)
	scenario := must(loadScenario(binary, &config{}))(t)
	path := t.TempDir() + "/scenario.json"
	if err := os.WriteFile(path, must(json.Marshal(scenario))(t), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFindBinary_TheOptionBeatsTheEnvironment_AndANonExecutableIsNamed(t *testing.T) {
	binary := must(FindBinary(""))(t)
	for _, c := range []struct{ explicit, environment, found, refusal string }{
		{explicit: binary, environment: "/nonexistent/appleid-mock", found: binary},
		{environment: "/nonexistent/appleid-mock", refusal: "the appleid-mock binary /nonexistent/appleid-mock is not an executable file"},
		{explicit: "go.mod", environment: binary, refusal: "the appleid-mock binary go.mod is not an executable file"},
		{environment: binary, found: binary},
	} {
		t.Setenv("APPLEID_MOCK_BIN", c.environment)
		found, err := FindBinary(c.explicit)
		if found != c.found || (err == nil) != (c.refusal == "") || (err != nil && err.Error() != c.refusal) {
			t.Fatalf("%+v: got %q, %v", c, found, err)
		}
	}
}

func TestVerifyIDToken_TakesAGenuineToken_AndRefusesEachDefect(t *testing.T) {
	mock := shared(t)
	for _, c := range []struct{ defect, refusal string }{
		{defect: ""},
		{defect: "bad-signature", refusal: "the id_token does not verify: the RS256 signature does not verify under W2ek7HdPaL"},
		{defect: "alg-none", refusal: `the id_token does not verify: alg is "none", not RS256`},
		{defect: "wrong-issuer", refusal: `the id_token does not verify: iss is "https://appleid.apple.com.attacker.example", not "https://appleid.apple.com"`},
		{defect: "wrong-audience", refusal: `the id_token does not verify: aud is "com.attacker.app", not "com.example.app"`},
		{defect: "expired", refusal: "the id_token does not verify: exp "},
	} {
		t.Run(c.defect, func(t *testing.T) {
			fields := Object{}
			if c.defect != "" {
				fields["defect"] = c.defect
			}
			token := must(mock.Token("alice", app, fields))(t)["id_token"].(string)
			claims, err := mock.VerifyIDToken(token, app)
			if c.refusal == "" {
				if err != nil || claims["sub"] == nil {
					t.Fatalf("%v %v", claims, err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), c.refusal) {
				t.Fatalf("got %v, want %q", err, c.refusal)
			}
		})
	}
}
