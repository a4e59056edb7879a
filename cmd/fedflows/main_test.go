package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The run wants the logins of two people of the peer, and no stray
// argument, before it starts anything.
func TestRunWantsLogins(t *testing.T) {
	one := filepath.Join(t.TempDir(), "logins")
	if err := os.WriteFile(one, []byte("a@example.org password-a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "-gts-logins"},
		{[]string{"-gts-logins", one, "stray"}, "-gts-logins"},
		{[]string{"-gts-logins", one}, "1 accounts, want 2"},
		{[]string{"-gts-logins", filepath.Join(t.TempDir(), "none")}, "no such file"},
	} {
		if err := run(context.Background(), c.args, io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}
