package main

import (
	"context"
	"io"
	"strings"
	"testing"
)

// Bad flags and impossible configurations are refused before anything
// starts.
func TestRefusesBadArguments(t *testing.T) {
	for _, args := range [][]string{
		{"-clients", "0"},
		{"-duration", "0s"},
		{"-no-such-flag"},
		{"-clients", "many"},
	} {
		var errOut strings.Builder
		if n, err := realMain(context.Background(), args, io.Discard, &errOut); err == nil {
			t.Errorf("realMain(%q) = %d violations, no error", args, n)
		}
	}
}
