package mcp

// This file is the client credentials grant with a private key: the client
// proves itself with a JWT it signs (RFC 7523's private_key_jwt, MCP's
// SEP-1046), for servers that a service, not a user, signs in to. The SDK
// has the grant with a client secret only.

import (
	"context"
	"crypto"
	"crypto/ecdsa"
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
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// keyHandler gets tokens with the client credentials grant, signing a fresh
// assertion for each.
type keyHandler struct {
	clientID string
	key      crypto.Signer
	client   *http.Client
	mu       sync.Mutex
	ts       oauth2.TokenSource
}

// newKeyHandler reads the PEM private key (PKCS#8, EC P-256 or RSA) the
// client signs with.
func newKeyHandler(clientID string, pemKey []byte, client *http.Client) (*keyHandler, error) {
	blk, _ := pem.Decode(pemKey)
	if blk == nil {
		return nil, errors.New("the private key is not PEM")
	}
	var k any
	var err error
	switch blk.Type {
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(blk.Bytes)
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(blk.Bytes)
	default:
		k, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the private key: %w", err)
	}
	switch k := k.(type) {
	case *ecdsa.PrivateKey:
		if k.Curve.Params().BitSize != 256 {
			return nil, errors.New("an EC private key must be P-256 (ES256)")
		}
		return &keyHandler{clientID: clientID, key: k, client: client}, nil
	case *rsa.PrivateKey:
		return &keyHandler{clientID: clientID, key: k, client: client}, nil
	default:
		return nil, fmt.Errorf("a %T private key: want EC P-256 or RSA", k)
	}
}

func (h *keyHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ts, nil
}

// Authorize discovers the authorization server as the user's sign-in does
// (protected-resource metadata, then the server's metadata, with the older
// fallbacks) and gets a first token.
func (h *keyHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer func() { _, _ = io.Copy(io.Discard, resp.Body); _ = resp.Body.Close() }()
	chs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return fmt.Errorf("reading WWW-Authenticate: %w", err)
	}
	var scopes []string
	var metaURL string
	for _, c := range chs {
		if c.Scheme == "bearer" && scopes == nil && c.Params["scope"] != "" {
			scopes = strings.Fields(c.Params["scope"])
		}
		if metaURL == "" {
			metaURL = c.Params["resource_metadata"]
		}
	}
	as, prmScopes := h.authServer(ctx, metaURL, req.URL)
	if scopes == nil {
		scopes = prmScopes
	}
	asm, err := auth.GetAuthServerMetadata(ctx, as, h.client)
	if err != nil {
		return fmt.Errorf("the authorization server's metadata: %w", err)
	}
	if asm == nil {
		asm = &oauthex.AuthServerMeta{Issuer: as, TokenEndpoint: as + "/token"}
	}
	src := &assertionSource{h: h, issuer: asm.Issuer, tokenURL: asm.TokenEndpoint, scopes: scopes}
	ts := oauth2.ReuseTokenSource(nil, src)
	if _, err := ts.Token(); err != nil {
		return fmt.Errorf("the client credentials grant: %w", err)
	}
	h.mu.Lock()
	h.ts = ts
	h.mu.Unlock()
	return nil
}

// authServer is the server's authorization server and the scopes its
// protected-resource metadata offers; without metadata, the server's root.
func (h *keyHandler) authServer(ctx context.Context, metaURL string, resource *url.URL) (string, []string) {
	root := *resource
	root.Path, root.RawQuery, root.Fragment = "", "", ""
	var tries [][2]string // metadata URL, the resource it must name
	if metaURL != "" {
		tries = append(tries, [2]string{metaURL, resource.String()})
	}
	at := root
	at.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(resource.Path, "/")
	tries = append(tries, [2]string{at.String(), resource.String()})
	at.Path = "/.well-known/oauth-protected-resource"
	tries = append(tries, [2]string{at.String(), root.String()})
	for _, t := range tries {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, t[0], t[1], h.client)
		if err == nil && prm != nil && len(prm.AuthorizationServers) > 0 {
			return prm.AuthorizationServers[0], prm.ScopesSupported
		}
	}
	return root.String(), nil
}

// assertionSource asks the token endpoint for a token, with a new signed
// assertion each time.
type assertionSource struct {
	h                *keyHandler
	issuer, tokenURL string
	scopes           []string
}

func (s *assertionSource) Token() (*oauth2.Token, error) {
	jwt, err := s.h.assertion(s.issuer)
	if err != nil {
		return nil, err
	}
	cfg := clientcredentials.Config{ClientID: s.h.clientID, TokenURL: s.tokenURL, Scopes: s.scopes,
		AuthStyle: oauth2.AuthStyleInParams, EndpointParams: url.Values{
			"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
			"client_assertion":      {jwt}}}
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), oauth2.HTTPClient, s.h.client), time.Minute)
	defer cancel()
	return cfg.Token(ctx)
}

// assertion is a JWT naming the client to the authorization server
// audience, valid for five minutes.
func (h *keyHandler) assertion(audience string) (string, error) {
	alg := "RS256"
	if _, ok := h.key.(*ecdsa.PrivateKey); ok {
		alg = "ES256"
	}
	now := time.Now()
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	head, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{"iss": h.clientID, "sub": h.clientID, "aud": audience,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": enc.EncodeToString(jti)})
	signed := enc.EncodeToString(head) + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signed))
	var sig []byte
	switch k := h.key.(type) {
	case *ecdsa.PrivateKey:
		r, s, err := ecdsa.Sign(rand.Reader, k, sum[:])
		if err != nil {
			return "", err
		}
		// JWS wants r and s as two 32-byte numbers, not ASN.1.
		sig = append(pad32(r), pad32(s)...)
	case *rsa.PrivateKey:
		var err error
		if sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:]); err != nil {
			return "", err
		}
	}
	return signed + "." + enc.EncodeToString(sig), nil
}

func pad32(n *big.Int) []byte {
	b := make([]byte, 32)
	return n.FillBytes(b)
}
