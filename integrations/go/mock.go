package appleidmock

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// The most of an answer the kit reads (the mock's biggest, a page of the journal, is far less).
const maxAnswerBytes = 64 << 20

// Error is a refusal by the mock, or a mock that would not start: Error() says why in the mock's
// own words (its JSON error and field, or the stderr of a mock that exited). Status and Body are
// the answer's, when there was one.
type Error struct {
	Message string
	Status  int
	Body    any
	cause   error
}

func (e *Error) Error() string { return e.Message }

// Unwrap is the transport's error, for a request that got no answer.
func (e *Error) Unwrap() error { return e.cause }

// Object is a JSON object of the control API (docs/control-api.md).
type Object = map[string]any

// Mock is a running appleid-mock, driven through its control API (/__mock/…).
type Mock struct {
	// URL is where it answers: your backend's Apple base URL.
	URL string
	// Scenario is what it serves, when known: the defaults of ClientSecret and AuthorizeWeb.
	Scenario Object
	// Notifications receives and verifies the signed notifications (nil without a receiver).
	Notifications *Receiver

	client  *http.Client
	token   string
	timeout time.Duration
	process *process
}

func newMock(rawURL string, c *config) (*Mock, error) {
	if !strings.HasPrefix(rawURL, "http://") && !strings.HasPrefix(rawURL, "https://") {
		return nil, &Error{Message: fmt.Sprintf("the mock's url %q is not an http:// or https:// URL", rawURL)}
	}
	transport := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4}
	if c.ca != "" {
		pem := []byte(c.ca)
		if !strings.Contains(c.ca, "-----BEGIN") {
			read, err := os.ReadFile(c.ca)
			if err != nil {
				return nil, &Error{Message: fmt.Sprintf("the CA %s: %v", c.ca, err)}
			}
			pem = read
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &Error{Message: fmt.Sprintf("the CA %s holds no PEM certificate", c.ca)}
		}
		transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &Mock{
		URL:      strings.TrimRight(rawURL, "/"),
		Scenario: c.scenario,
		client:   &http.Client{Transport: transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		token:    c.controlToken,
		timeout:  c.timeout,
	}, nil
}

// ---- Apple's side of a sign-in ----

// SignIn is a native (iOS) sign-in: what ASAuthorizationAppleIDCredential hands the app (user,
// identityToken, authorizationCode, the first time email and fullName). fields: nonce, scopes,
// hide_email, defect.
func (m *Mock) SignIn(user, clientID string, fields Object) (Object, error) {
	body := Object{}
	for name, value := range fields {
		body[name] = value
	}
	body["user"], body["client_id"] = user, clientID
	return m.object("POST", "/__mock/sign-in", body, nil)
}

// AuthorizeWeb is the web flow without a browser (POST /__mock/authorize): how Apple would
// deliver the result to the redirect URI ({method, url, form}, or for web_message {message,
// method, target_origin}). parameters are the authorize parameters (client_id, redirect_uri,
// state, nonce, response_mode, scope, code_challenge, …) and the user's choices (hide_email,
// cancel, defect); client_id and redirect_uri default to the scenario's first Services ID and its
// first redirect URI.
func (m *Mock) AuthorizeWeb(user string, parameters Object) (Object, error) {
	body := Object{"response_type": "code"}
	for name, value := range parameters {
		body[name] = value
	}
	if _, given := body["client_id"]; !given {
		client := m.servicesClient()
		if client == nil {
			return nil, &Error{Message: "AuthorizeWeb: the scenario has no Services ID; pass client_id and redirect_uri"}
		}
		body["client_id"] = client["client_id"]
		if _, given := body["redirect_uri"]; !given {
			if uris, _ := client["redirect_uris"].([]any); len(uris) > 0 {
				body["redirect_uri"] = uris[0]
			}
		}
	}
	body["user"] = user
	return m.object("POST", "/__mock/authorize", body, nil)
}

// Token forges an id_token for user, genuine or with one defect (expired, wrong-audience,
// alg-none, …), changing nothing in the mock. fields: defect, nonce, claims, and kind
// "notification" with type for a signed notification; the whole answer.
func (m *Mock) Token(user, clientID string, fields Object) (Object, error) {
	body := Object{"user": user, "client_id": clientID}
	for name, value := range fields {
		body[name] = value
	}
	return m.object("POST", "/__mock/tokens", body, nil)
}

// ---- the world around it ----

// AdvanceClock moves the mock clock on by seconds; answers the clock.
func (m *Mock) AdvanceClock(seconds int) (Object, error) {
	return m.object("POST", "/__mock/clock", Object{"advance": seconds}, nil)
}

// RotateKeys is one step of Apple's key rotation: a fresh key signs, the previous ones stay
// published. Answers {kid, previous, …}.
func (m *Mock) RotateKeys() (Object, error) {
	return m.object("POST", "/__mock/keys/rotate", Object{}, nil)
}

// FireEvent is a user's action at Apple (consent-revoked, account-delete, email-disabled,
// email-enabled): the state changes and the app group's signed notification is queued.
func (m *Mock) FireEvent(eventType, user, clientID string) (Object, error) {
	return m.object("POST", "/__mock/events", Object{"type": eventType, "user": user, "client_id": clientID}, nil)
}

// ChangePassword: the user changed their Apple Account password. Their refresh tokens answer
// invalid_grant, no notification is sent, the credential state stays authorized.
func (m *Mock) ChangePassword(user string) (Object, error) {
	return m.object("POST", "/__mock/events", Object{"type": "password-changed", "user": user}, nil)
}

// Reset goes back to the scenario's start: users, consents, codes, transfers, keys and clock.
func (m *Mock) Reset() error {
	_, err := m.object("POST", "/__mock/reset", Object{}, nil)
	return err
}

// Health answers {active_kid, issuer, status}.
func (m *Mock) Health() (Object, error) { return m.object("GET", "/__mock/health", nil, nil) }

// AddFault installs one fault (a scenario faults entry: {path, times, action, status, …}).
func (m *Mock) AddFault(fault Object) (Object, error) {
	return m.object("POST", "/__mock/faults", fault, nil)
}

// Incident installs one of Apple's own incidents (discovery-issuer-flip,
// jwks-without-signing-key, token-endpoint-outage, notifications-once), for minutes of mock
// time when minutes > 0.
func (m *Mock) Incident(name string, minutes int) (Object, error) {
	body := Object{"incident": name}
	if minutes > 0 {
		body["minutes"] = minutes
	}
	return m.object("POST", "/__mock/faults", body, nil)
}

// Faults lists the installed faults.
func (m *Mock) Faults() ([]Object, error) {
	var answer struct{ Faults []Object }
	err := m.Call("GET", "/__mock/faults", nil, nil, &answer)
	return answer.Faults, err
}

// ClearFaults removes every fault, or every fault of incident; answers how many there were.
func (m *Mock) ClearFaults(incident string) (int, error) {
	query := url.Values{}
	if incident != "" {
		query.Set("incident", incident)
	}
	var answer struct{ Removed int }
	err := m.Call("DELETE", "/__mock/faults", nil, query, &answer)
	return answer.Removed, err
}

// ---- reading what went wrong ----

// Requests is the request journal, oldest first, with the reason for each refusal. filters:
// method, path, client_id, grant_type, status ("400", "4xx"), control, after, limit, wait.
func (m *Mock) Requests(filters url.Values) ([]Object, error) {
	var answer struct{ Requests []Object }
	err := m.Call("GET", "/__mock/requests", nil, filters, &answer)
	return answer.Requests, err
}

// JournalMark is the id of the newest journal entry (0 with the journal off): later entries
// come after it.
func (m *Mock) JournalMark() int {
	var answer struct{ Newest int }
	if err := m.Call("GET", "/__mock/requests", nil, url.Values{"limit": {"1"}, "after": {"0"}, "control": {"false"}}, &answer); err != nil {
		return 0
	}
	return answer.Newest
}

// Refusals lists the requests to Apple's routes the mock refused after journal id after, one
// line each with the reason its stderr gave: "POST /auth/token 400 invalid_client — client_secret …".
func (m *Mock) Refusals(after int) []string {
	entries, err := m.Requests(url.Values{"after": {strconv.Itoa(after)}, "control": {"false"}, "status": {"4xx"}, "limit": {"1000"}})
	if err != nil {
		return []string{"(the journal is unavailable: " + err.Error() + ")"}
	}
	lines := make([]string, 0, len(entries))
	for _, e := range entries {
		reason, _ := e["reason"].(string)
		if reason == "" {
			reason = "no reason given"
		}
		status, _ := e["status"].(float64)
		line := fmt.Sprintf("%v %v %d", e["method"], e["path"], int(status))
		if code, _ := e["error"].(string); code != "" {
			line += " " + code
		}
		lines = append(lines, line+" — "+reason)
	}
	return lines
}

// Logs is what the mock wrote to stderr so far, for a mock Start ran.
func (m *Mock) Logs() []string {
	if m.process == nil {
		return nil
	}
	return m.process.logs()
}

// ---- plumbing ----

// Call sends one control or Apple request (body as JSON when not nil) and decodes the answer's
// JSON into out (when not nil); an answer that is not 2xx is an *Error naming what the mock said.
func (m *Mock) Call(method, path string, body any, query url.Values, out any) error {
	target := m.URL + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var reader io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return &Error{Message: fmt.Sprintf("%s %s: the body is not JSON: %v", method, path, err)}
		}
		reader = bytes.NewReader(data)
	}
	request, err := http.NewRequest(method, target, reader)
	if err != nil {
		return &Error{Message: fmt.Sprintf("%s %s: %v", method, target, err)}
	}
	request.Header.Set("Accept", "application/json")
	if body != nil {
		request.Header.Set("Content-Type", "application/json")
	}
	if m.token != "" {
		request.Header.Set("Authorization", "Bearer "+m.token)
	}
	timeout := m.timeout
	if wait, err := strconv.Atoi(query.Get("wait")); err == nil && wait > 0 {
		timeout += time.Duration(wait) * time.Second
	}
	client := *m.client
	client.Timeout = timeout
	answer, err := client.Do(request)
	if err != nil {
		return &Error{Message: fmt.Sprintf("%s %s: %v", method, target, err), cause: err}
	}
	defer answer.Body.Close()
	text, err := io.ReadAll(io.LimitReader(answer.Body, maxAnswerBytes+1))
	if err != nil {
		return &Error{Message: fmt.Sprintf("%s %s: %v", method, target, err)}
	}
	if len(text) > maxAnswerBytes {
		return &Error{Message: fmt.Sprintf("%s %s: the answer is over %d bytes", method, path, maxAnswerBytes)}
	}
	if answer.StatusCode < 200 || answer.StatusCode > 299 {
		var refusal struct {
			Error *string
			Field *string
		}
		said := strings.TrimSpace(string(text))
		if len(said) > 500 {
			said = said[:500]
		}
		var parsed any
		if json.Unmarshal(text, &refusal) == nil && refusal.Error != nil {
			said = *refusal.Error
			if refusal.Field != nil {
				said += " (field " + *refusal.Field + ")"
			}
			_ = json.Unmarshal(text, &parsed)
		} else {
			parsed = string(text)
		}
		return &Error{Message: fmt.Sprintf("%s %s answered %d: %s", method, path, answer.StatusCode, said), Status: answer.StatusCode, Body: parsed}
	}
	if out == nil {
		return nil
	}
	if len(text) == 0 {
		text = []byte("{}")
	}
	if err := json.Unmarshal(text, out); err != nil {
		return &Error{Message: fmt.Sprintf("%s %s answered %d with no JSON: %.500s", method, path, answer.StatusCode, text), Status: answer.StatusCode, Body: string(text)}
	}
	return nil
}

func (m *Mock) object(method, path string, body any, query url.Values) (Object, error) {
	var answer Object
	if err := m.Call(method, path, body, query, &answer); err != nil {
		return nil, err
	}
	return answer, nil
}

// waitUntilHealthy asks /__mock/health every 50 ms until it answers, for at most timeout.
// alive, when not nil, is asked in between and its error ends the wait; so does a certificate
// Go does not trust (an https mock without its CA never becomes healthy).
func (m *Mock) waitUntilHealthy(timeout time.Duration, alive func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		_, err := m.Health()
		if err == nil {
			return nil
		}
		var unknown x509.UnknownAuthorityError
		var invalid x509.CertificateInvalidError
		var hostname x509.HostnameError
		var untrusted error
		switch {
		case errors.As(err, &unknown):
			untrusted = unknown
		case errors.As(err, &invalid):
			untrusted = invalid
		case errors.As(err, &hostname):
			untrusted = hostname
		}
		if untrusted != nil {
			return &Error{Message: fmt.Sprintf("%s serves a certificate Go does not trust (%v): give the kit its CA (the CA option, e.g. the cert.pem of `appleid-mock tls generate`)", m.URL, untrusted)}
		}
		if alive != nil {
			if failed := alive(); failed != nil {
				return failed
			}
		}
		if time.Now().After(deadline) {
			return &Error{Message: fmt.Sprintf("%s did not answer /__mock/health within %v: %v", m.URL, timeout, err)}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (m *Mock) teams() []Object {
	list, _ := m.Scenario["teams"].([]any)
	teams := make([]Object, 0, len(list))
	for _, team := range list {
		if object, ok := team.(Object); ok {
			teams = append(teams, object)
		}
	}
	return teams
}

func clientsOf(team Object) []Object {
	list, _ := team["clients"].([]any)
	clients := make([]Object, 0, len(list))
	for _, client := range list {
		if object, ok := client.(Object); ok {
			clients = append(clients, object)
		}
	}
	return clients
}

func (m *Mock) servicesClient() Object {
	for _, team := range m.teams() {
		for _, client := range clientsOf(team) {
			if client["type"] == "services_id" {
				return client
			}
		}
	}
	return nil
}
