package appleidmock

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"strings"
	"time"
)

// BuiltInKey is the committed test-only developer key of the built-in scenario
// (Keys/AuthKey_MOCKKEY001.p8 in the AppleIDMock repository; the mock has its public half).
//
//go:embed AuthKey_MOCKKEY001.p8
var BuiltInKey string

const (
	BuiltInTeam  = "MOCKTEAM01"
	BuiltInKeyID = "MOCKKEY001"
	// MaxSecretLifetime is Apple's limit on a client_secret's lifetime (exp - iat), six months.
	MaxSecretLifetime = 15777000 * time.Second
	appleAudience     = "https://appleid.apple.com"
)

// SecretOptions are ClientSecret's choices; the zero value is the team of clientID in the
// scenario (else the built-in one), its first developer key, a lifetime of an hour from now.
type SecretOptions struct {
	TeamID string
	KeyID  string
	// Key is a .p8 path or its PEM text; default the built-in test key.
	Key      string
	Lifetime time.Duration
	IssuedAt time.Time
}

// ClientSecret is the ES256 client_secret your backend sends /auth/token for clientID, signed
// (raw R‖S, as JWS wants) by the team's developer key.
func (m *Mock) ClientSecret(clientID string, options SecretOptions) (string, error) {
	team := m.teamOf(options.TeamID, clientID)
	teamID, keyID := options.TeamID, options.KeyID
	if teamID == "" {
		teamID, _ = team["team_id"].(string)
		if teamID == "" {
			teamID = BuiltInTeam
		}
	}
	if keyID == "" {
		if keys, _ := team["developer_keys"].([]any); len(keys) > 0 {
			if first, ok := keys[0].(Object); ok {
				keyID, _ = first["key_id"].(string)
			}
		}
		if keyID == "" {
			keyID = BuiltInKeyID
		}
	}
	text, named := options.Key, "key "+options.Key
	switch {
	case text == "" && keyID != BuiltInKeyID:
		return "", &Error{Message: fmt.Sprintf("ClientSecret: key %s of team %s is not the built-in test key; pass Key (the path of its .p8, or its PEM)", keyID, teamID)}
	case text == "":
		text, named = BuiltInKey, BuiltInKeyID
	case strings.Contains(text, "-----BEGIN"):
		named = "the key given"
	default:
		read, err := os.ReadFile(text)
		if err != nil {
			return "", &Error{Message: fmt.Sprintf("ClientSecret: %v", err)}
		}
		text = string(read)
	}
	lifetime := options.Lifetime
	if lifetime == 0 {
		lifetime = time.Hour
	}
	if lifetime < time.Second || lifetime > MaxSecretLifetime {
		return "", &Error{Message: fmt.Sprintf("ClientSecret: lifetime %v is outside 1s…%v (Apple's six months)", lifetime, MaxSecretLifetime)}
	}
	key, err := p256PrivateKey(text)
	if err != nil {
		return "", &Error{Message: fmt.Sprintf("ClientSecret: %s: %v", named, err)}
	}
	issued := options.IssuedAt
	if issued.IsZero() {
		issued = time.Now()
	}
	iat := issued.Unix()
	claims := Object{"iss": teamID, "iat": iat, "exp": iat + int64(lifetime/time.Second), "aud": appleAudience, "sub": clientID}
	return es256JWT(Object{"alg": "ES256", "kid": keyID}, claims, key)
}

// p256PrivateKey is the key of a PKCS#8 PEM (an App Store Connect .p8), checked to be P-256.
func p256PrivateKey(text string) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode([]byte(text))
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("expected a PKCS#8 PEM (-----BEGIN PRIVATE KEY-----), as an App Store Connect .p8 is")
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("expected a PKCS#8 PEM, as an App Store Connect .p8 is: %v", err)
	}
	key, ok := parsed.(*ecdsa.PrivateKey)
	if !ok || key.Curve != elliptic.P256() {
		return nil, fmt.Errorf("the key is %T, not an EC P-256 key", parsed)
	}
	return key, nil
}

func es256JWT(header, claims Object, key *ecdsa.PrivateKey) (string, error) {
	headerJSON, err := json.Marshal(header)
	if err != nil {
		return "", err
	}
	claimsJSON, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	input := b64(headerJSON) + "." + b64(claimsJSON)
	digest := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
	if err != nil {
		return "", err
	}
	signature := make([]byte, 64)
	r.FillBytes(signature[:32])
	s.FillBytes(signature[32:])
	return input + "." + b64(signature), nil
}

func b64(data []byte) string { return base64.RawURLEncoding.EncodeToString(data) }

func (m *Mock) teamOf(teamID, clientID string) Object {
	teams := m.teams()
	for _, team := range teams {
		if teamID != "" && team["team_id"] == teamID {
			return team
		}
		if teamID == "" && clientID != "" {
			for _, client := range clientsOf(team) {
				if client["client_id"] == clientID {
					return team
				}
			}
		}
	}
	if teamID == "" && len(teams) > 0 {
		return teams[0]
	}
	return nil
}
