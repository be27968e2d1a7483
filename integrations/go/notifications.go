package appleidmock

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

const maxNotificationBytes = 1 << 20

// NotificationPath is where the receiver takes notifications.
const NotificationPath = "/apple/notifications"

// Notification is one verified server-to-server notification.
type Notification struct {
	Type   string
	Sub    string
	Events Object
	Claims Object
	Kid    string
	Token  string
}

type received struct {
	notification *Notification
	err          string
}

// Receiver takes Apple's server-to-server notifications and verifies each as a careful backend
// would: RS256 under a key /auth/keys publishes (fetched again for an unknown kid), iss the
// mock's issuer, aud a client of the scenario, iat not after the mock's clock, and an events
// claim (a JSON string, as Apple sends it, or an object) with a type. It answers 200, or 400 with
// the reason (the mock's delivery log then shows the attempt and retries it).
type Receiver struct {
	// URL is the notification_url to give a scenario's team.
	URL string

	server   *http.Server
	listener net.Listener
	mu       sync.Mutex
	records  []received
	arrived  chan struct{}
	next     int
	keys     map[string]Object
	mock     *Mock
}

// NewReceiver listens on 127.0.0.1 and a free port.
func NewReceiver() (*Receiver, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, &Error{Message: fmt.Sprintf("the notification receiver cannot listen: %v", err)}
	}
	r := &Receiver{URL: "http://" + listener.Addr().String() + NotificationPath, listener: listener, arrived: make(chan struct{}), keys: map[string]Object{}}
	r.server = &http.Server{Handler: http.HandlerFunc(r.serve), ReadTimeout: 30 * time.Second, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.server.Serve(listener) }()
	return r, nil
}

// Attach verifies against mock (its keys, issuer, clock and scenario) from now on.
func (r *Receiver) Attach(mock *Mock) {
	r.mu.Lock()
	r.mock = mock
	r.mu.Unlock()
}

// Close stops listening.
func (r *Receiver) Close() error { return r.server.Close() }

// Received is how many notifications (verified or not) arrived so far.
func (r *Receiver) Received() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.records)
}

// Next is the next notification, waiting up to timeout; one that failed verification is an
// error saying why.
func (r *Receiver) Next(timeout time.Duration) (*Notification, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		if r.next < len(r.records) {
			record := r.records[r.next]
			r.next++
			r.mu.Unlock()
			if record.err != "" {
				return nil, &Error{Message: "a notification failed verification: " + record.err}
			}
			return record.notification, nil
		}
		arrived := r.arrived
		r.mu.Unlock()
		select {
		case <-arrived:
		case <-deadline.C:
			return nil, &Error{Message: fmt.Sprintf("no notification arrived at %s within %v (the mock's delivery log, GET /__mock/notifications, says where it went)", r.URL, timeout)}
		}
	}
}

func (r *Receiver) serve(w http.ResponseWriter, request *http.Request) {
	answer := func(status int, body Object) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(body)
	}
	if request.Method != http.MethodPost {
		answer(http.StatusMethodNotAllowed, Object{"error": request.Method + " is not POST"})
		return
	}
	body, err := io.ReadAll(io.LimitReader(request.Body, maxNotificationBytes+1))
	var record received
	switch {
	case err != nil:
		record.err = "the body could not be read: " + err.Error()
	case len(body) > maxNotificationBytes:
		record.err = fmt.Sprintf("the body is over %d bytes", maxNotificationBytes)
	default:
		record.notification, err = r.verify(body)
		if err != nil {
			record.err = err.Error()
		}
	}
	r.mu.Lock()
	r.records = append(r.records, record)
	close(r.arrived)
	r.arrived = make(chan struct{})
	r.mu.Unlock()
	if record.err != "" {
		answer(http.StatusBadRequest, Object{"error": record.err})
	} else {
		answer(http.StatusOK, Object{"ok": true})
	}
}

func (r *Receiver) verify(body []byte) (*Notification, error) {
	var envelope Object
	if json.Unmarshal(body, &envelope) != nil {
		return nil, fmt.Errorf("the body is not JSON")
	}
	token, ok := envelope["payload"].(string)
	if !ok {
		return nil, fmt.Errorf("the body has no payload string")
	}
	r.mu.Lock()
	mock := r.mock
	r.mu.Unlock()
	if mock == nil {
		return nil, fmt.Errorf("no mock attached to verify against")
	}
	kid, claims, err := verifyRS256(token, func(kid string) (Object, error) { return r.key(mock, kid) })
	if err != nil {
		return nil, err
	}
	health, err := mock.Health()
	if err != nil {
		return nil, err
	}
	if claims["iss"] != health["issuer"] {
		return nil, fmt.Errorf("iss is %q, not %q", claims["iss"], health["issuer"])
	}
	clients := map[string]bool{}
	for _, team := range mock.teams() {
		for _, client := range clientsOf(team) {
			if id, ok := client["client_id"].(string); ok {
				clients[id] = true
			}
		}
	}
	if aud, _ := claims["aud"].(string); len(clients) > 0 && !clients[aud] {
		return nil, fmt.Errorf("aud %q is none of the scenario's clients", claims["aud"])
	}
	var clock struct{ Epoch float64 }
	if err := mock.Call("GET", "/__mock/clock", nil, nil, &clock); err != nil {
		return nil, err
	}
	if iat, ok := claims["iat"].(float64); !ok || iat > clock.Epoch+60 {
		// As JSON wrote them: %v would print 1795558056 as 1.795558056e+09.
		shown, _ := json.Marshal(claims["iat"])
		return nil, fmt.Errorf("iat %s is after the mock's clock (%s)", shown, strconv.FormatFloat(clock.Epoch, 'f', -1, 64))
	}
	events, _ := claims["events"].(Object)
	if text, ok := claims["events"].(string); ok {
		if json.Unmarshal([]byte(text), &events) != nil {
			return nil, fmt.Errorf("the events claim is a string that is not JSON")
		}
	}
	eventType, _ := events["type"].(string)
	if eventType == "" {
		return nil, fmt.Errorf("the events claim %v has no type", claims["events"])
	}
	sub, _ := events["sub"].(string)
	return &Notification{Type: eventType, Sub: sub, Events: events, Claims: claims, Kid: kid, Token: token}, nil
}

// verifyRS256 checks token's RS256 signature under the key its kid names (key answers it, or
// an error); answers the kid and the claims.
func verifyRS256(token string, key func(kid string) (Object, error)) (string, Object, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", nil, fmt.Errorf("the token has %d parts, not 3", len(parts))
	}
	var header struct{ Alg, Kid string }
	var claims Object
	if !decodePart(parts[0], &header) {
		return "", nil, fmt.Errorf("the token's header is not base64url JSON")
	}
	if !decodePart(parts[1], &claims) {
		return "", nil, fmt.Errorf("the token's claims are not base64url JSON")
	}
	if header.Alg != "RS256" {
		return "", nil, fmt.Errorf("alg is %q, not RS256", header.Alg)
	}
	jwk, err := key(header.Kid)
	if err != nil {
		return "", nil, err
	}
	if !rs256Valid(parts, jwk) {
		return "", nil, fmt.Errorf("the RS256 signature does not verify under %s", header.Kid)
	}
	return header.Kid, claims, nil
}

// VerifyIDToken checks an id_token as a backend should: RS256 under a key /auth/keys
// publishes, iss the mock's issuer, aud clientID, exp after the mock's clock. Answers its claims.
func (m *Mock) VerifyIDToken(token, clientID string) (Object, error) {
	_, claims, err := verifyRS256(token, func(kid string) (Object, error) {
		keys, err := m.publishedKeys()
		if err != nil {
			return nil, err
		}
		if jwk, known := keys[kid]; known {
			return jwk, nil
		}
		return nil, fmt.Errorf("kid %q is not published at /auth/keys", kid)
	})
	if err != nil {
		return nil, &Error{Message: "the id_token does not verify: " + err.Error()}
	}
	health, err := m.Health()
	if err != nil {
		return nil, err
	}
	var clock struct{ Epoch float64 }
	if err := m.Call("GET", "/__mock/clock", nil, nil, &clock); err != nil {
		return nil, err
	}
	exp, _ := claims["exp"].(float64)
	switch {
	case claims["iss"] != health["issuer"]:
		err = fmt.Errorf("iss is %q, not %q", claims["iss"], health["issuer"])
	case claims["aud"] != clientID:
		err = fmt.Errorf("aud is %q, not %q", claims["aud"], clientID)
	case exp <= clock.Epoch:
		err = fmt.Errorf("exp %v is not after the mock's clock (%v)", claims["exp"], clock.Epoch)
	}
	if err != nil {
		return nil, &Error{Message: "the id_token does not verify: " + err.Error()}
	}
	return claims, nil
}

func (m *Mock) publishedKeys() (map[string]Object, error) {
	var published struct{ Keys []Object }
	if err := m.Call("GET", "/auth/keys", nil, nil, &published); err != nil {
		return nil, err
	}
	keys := map[string]Object{}
	for _, key := range published.Keys {
		if id, ok := key["kid"].(string); ok {
			keys[id] = key
		}
	}
	return keys, nil
}

func (r *Receiver) key(mock *Mock, kid string) (Object, error) {
	r.mu.Lock()
	jwk, known := r.keys[kid]
	r.mu.Unlock()
	if known {
		return jwk, nil
	}
	keys, err := mock.publishedKeys()
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.keys = keys
	r.mu.Unlock()
	if jwk, known = keys[kid]; !known {
		return nil, fmt.Errorf("kid %q is not published at /auth/keys", kid)
	}
	return jwk, nil
}

func decodePart(part string, into any) bool {
	data, err := base64.RawURLEncoding.DecodeString(part)
	return err == nil && json.Unmarshal(data, into) == nil
}

// rs256Valid is whether the token's RS256 signature verifies under jwk (an RSA JWK).
func rs256Valid(parts []string, jwk Object) bool {
	n, okN := jwk["n"].(string)
	e, okE := jwk["e"].(string)
	if !okN || !okE {
		return false
	}
	modulus, errN := base64.RawURLEncoding.DecodeString(n)
	exponent, errE := base64.RawURLEncoding.DecodeString(e)
	signature, errS := base64.RawURLEncoding.DecodeString(parts[2])
	if errN != nil || errE != nil || errS != nil || len(exponent) > 4 {
		return false
	}
	key := &rsa.PublicKey{N: new(big.Int).SetBytes(modulus), E: int(new(big.Int).SetBytes(exponent).Int64())}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	return rsa.VerifyPKCS1v15(key, crypto.SHA256, digest[:], signature) == nil
}
