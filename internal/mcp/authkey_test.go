package mcp

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
	"math/big"
	"strings"
	"testing"
)

// TestAssertion: the JWT a client credentials grant signs verifies with the
// client's public key and names the client and the authorization server.
func TestAssertion(t *testing.T) {
	ec256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ec384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	pkcs8 := func(k any) []byte {
		b, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: b})
	}
	for _, tc := range []struct {
		name, alg, bad string
		key            []byte
		public         crypto.PublicKey
	}{
		{name: "ES256", alg: "ES256", key: pkcs8(ec256), public: &ec256.PublicKey},
		{name: "RS256", alg: "RS256", key: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)}),
			public: &rsaKey.PublicKey},
		{name: "P-384", key: pkcs8(ec384), bad: "P-256"},
		{name: "not PEM", key: []byte("-----nothing"), bad: "not PEM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := newKeyHandler("client-1", tc.key, nil)
			if tc.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("newKeyHandler = %v, want an error about %s", err, tc.bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			jwt, err := h.assertion("http://127.0.0.1:1/as")
			if err != nil {
				t.Fatal(err)
			}
			parts := strings.Split(jwt, ".")
			if len(parts) != 3 {
				t.Fatalf("jwt = %q", jwt)
			}
			dec := base64.RawURLEncoding
			var head, claims map[string]any
			hb, _ := dec.DecodeString(parts[0])
			cb, _ := dec.DecodeString(parts[1])
			sig, _ := dec.DecodeString(parts[2])
			if json.Unmarshal(hb, &head) != nil || json.Unmarshal(cb, &claims) != nil {
				t.Fatalf("undecodable jwt %q", jwt)
			}
			if head["alg"] != tc.alg || claims["iss"] != "client-1" || claims["sub"] != "client-1" || claims["aud"] != "http://127.0.0.1:1/as" {
				t.Errorf("head %v, claims %v", head, claims)
			}
			sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
			ok := false
			switch pub := tc.public.(type) {
			case *ecdsa.PublicKey:
				ok = len(sig) == 64 && ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:]))
			case *rsa.PublicKey:
				ok = rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig) == nil
			}
			if !ok {
				t.Error("the signature does not verify with the public key")
			}
		})
	}
}
