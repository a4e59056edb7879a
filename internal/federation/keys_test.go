package federation

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sync/errgroup"
	"google.golang.org/api/option"
	"google.golang.org/grpc"

	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// A person's key pair is made once, the same on every instance; its
// public half, as actors show it, checks what its private half signs;
// an erasure takes it, and a person made again gets another.
func TestKeysAreMadeOnceAndErased(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	a, b := NewKeys(db), NewKeys(db) // two instances
	first, err := a.Of(ctx, "7")
	if err != nil {
		t.Fatal(err)
	}
	other, err := b.Of(ctx, "7")
	if err != nil || other.PublicPEM != first.PublicPEM {
		t.Fatalf("two instances: a key each (%v)", err)
	}
	if again, _ := a.Of(ctx, "7"); again.PublicPEM != first.PublicPEM {
		t.Fatal("a second read: another key")
	}
	if someone, _ := a.Of(ctx, "8"); someone.PublicPEM == first.PublicPEM {
		t.Fatal("two people share a key")
	}

	block, _ := pem.Decode([]byte(first.PublicPEM))
	if block == nil || block.Type != "PUBLIC KEY" {
		t.Fatalf("public PEM: %q", first.PublicPEM)
	}
	parsed, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pub := parsed.(*rsa.PublicKey)
	digest := sha256.Sum256([]byte("a signing string"))
	sig, err := rsa.SignPKCS1v15(rand.Reader, other.Private(), crypto.SHA256, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig); err != nil {
		t.Errorf("the public half does not check the private half's signature: %v", err)
	}

	if _, err := a.Erase(ctx, "7"); err != nil {
		t.Fatal(err)
	}
	var stored actorKey
	if ok, err := db.Get(ctx, actorKeyKey(db, "7"), &stored); err != nil || ok {
		t.Fatalf("after the erasure: stored %v, %v", ok, err)
	}
	if made, _ := a.Of(ctx, "7"); made.PublicPEM == first.PublicPEM {
		t.Error("the erased key came back")
	}
}

// ParseDomain takes a lowercase host name, or on loopback alone an
// address with its port.
func TestParseDomain(t *testing.T) {
	for _, c := range []struct {
		in       string
		loopback bool
		ok       bool
	}{
		{"", false, true},
		{"social.example", false, true},
		{"xn--bcher-kva.example", false, true},
		{"social", false, false},
		{"Social.example", false, false},
		{"social.example.", false, false},
		{"-a.example", false, false},
		{"a_b.example", false, false},
		{"social.example:443", false, false},
		{"https://social.example", false, false},
		{"social.example/path", false, false},
		{"user@social.example", false, false},
		{"192.0.2.1", false, false},
		{"[2001:db8::1]", false, false},
		{"127.0.0.1:8090", false, false},
		{"127.0.0.1:8090", true, true},
		{"[::1]:8090", true, true},
		{"localhost:8090", true, true},
		{"127.0.0.1", true, false},
	} {
		_, err := ParseDomain(c.in, c.loopback)
		if (err == nil) != c.ok {
			t.Errorf("ParseDomain(%q, loopback %v): %v", c.in, c.loopback, err)
		}
	}
}

// A new person's key, asked for by many requests of one instance at
// once (their first deliveries, each a job), is made and kept by one of
// them: one transaction, one key for all.
func TestKeysAskedAtOnceAreMadeOnce(t *testing.T) {
	var begun atomic.Int32
	db := testenv.DBWith(t, option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(func(ctx context.Context, m string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if strings.HasSuffix(m, "/BeginTransaction") {
			begun.Add(1)
		}
		return invoker(ctx, m, req, reply, cc, opts...)
	})))
	keys := NewKeys(db)
	ctx := context.Background()
	var got [8]Key
	var g errgroup.Group
	for i := range got {
		g.Go(func() (err error) {
			got[i], err = keys.Of(ctx, "9")
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	for i, k := range got {
		if k.PublicPEM == "" || k.PublicPEM != got[0].PublicPEM {
			t.Fatalf("request %d got another key", i)
		}
	}
	if n := begun.Load(); n != 1 {
		t.Errorf("%d transactions made the key, want 1", n)
	}
}
