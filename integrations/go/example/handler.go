// Package example is a backend's Sign in with Apple callback, as a team adopting the kit has
// one: a net/http handler that redeems Apple's code and verifies the id_token with the standard
// library. handler_test.go is its test against the mock.
package example

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"time"
)

const issuer = "https://appleid.apple.com"

// Callback answers Apple's form_post at the redirect URI: it redeems the code at Apple+/auth/token
// (with the redirect_uri the web flow used, as Apple requires), verifies the id_token against
// Apple+/auth/keys, and answers {sub, email}; 401 with the reason otherwise.
type Callback struct {
	Apple        string // https://appleid.apple.com, or the mock's URL
	ClientID     string
	RedirectURI  string
	ClientSecret func() (string, error)
}

func (c Callback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reply := func(status int, body map[string]any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(body)
	}
	secret, err := c.ClientSecret()
	if err != nil {
		reply(http.StatusInternalServerError, map[string]any{"error": err.Error()})
		return
	}
	response, err := http.PostForm(c.Apple+"/auth/token", url.Values{"grant_type": {"authorization_code"}, "code": {r.FormValue("code")},
		"client_id": {c.ClientID}, "client_secret": {secret}, "redirect_uri": {c.RedirectURI}})
	if err != nil {
		reply(http.StatusBadGateway, map[string]any{"error": err.Error()})
		return
	}
	defer response.Body.Close()
	var tokens struct {
		IDToken string `json:"id_token"`
		Error   string `json:"error"`
	}
	_ = json.NewDecoder(response.Body).Decode(&tokens)
	if response.StatusCode != http.StatusOK {
		reply(http.StatusUnauthorized, map[string]any{"error": "apple said " + tokens.Error})
		return
	}
	claims, err := c.verify(tokens.IDToken)
	if err != nil {
		reply(http.StatusUnauthorized, map[string]any{"error": err.Error()})
		return
	}
	reply(http.StatusOK, map[string]any{"sub": claims["sub"], "email": claims["email"]})
}

func (c Callback) verify(token string) (map[string]any, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, errors.New("not a JWS")
	}
	var header struct{ Alg, Kid string }
	var claims map[string]any
	if decode(parts[0], &header) != nil || decode(parts[1], &claims) != nil || header.Alg != "RS256" {
		return nil, errors.New("bad token")
	}
	key, err := c.key(header.Kid)
	if err != nil {
		return nil, err
	}
	signature, _ := base64.RawURLEncoding.DecodeString(parts[2])
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(key, crypto.SHA256, digest[:], signature) != nil {
		return nil, errors.New("bad signature")
	}
	exp, _ := claims["exp"].(float64)
	if claims["iss"] != issuer || claims["aud"] != c.ClientID || time.Unix(int64(exp), 0).Before(time.Now()) {
		return nil, errors.New("bad claims")
	}
	return claims, nil
}

func (c Callback) key(kid string) (*rsa.PublicKey, error) {
	response, err := http.Get(c.Apple + "/auth/keys")
	if err != nil {
		return nil, err
	}
	defer response.Body.Close()
	var keys struct{ Keys []struct{ Kid, N, E string } }
	if err := json.NewDecoder(response.Body).Decode(&keys); err != nil {
		return nil, err
	}
	for _, k := range keys.Keys {
		if k.Kid == kid {
			n, _ := base64.RawURLEncoding.DecodeString(k.N)
			e, _ := base64.RawURLEncoding.DecodeString(k.E)
			return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}, nil
		}
	}
	return nil, errors.New("bad signature")
}

func decode(part string, into any) error {
	data, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}
