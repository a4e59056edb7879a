package api

import (
	"errors"
	"testing"

	"socialstream/internal/derrors"
)

func FuzzParseRPC(f *testing.F) {
	for _, s := range []string{
		`{"method":"people.get","id":"1","params":{"userId":"@me"}}`,
		`[{"method":"a"},{"method":"b","params":null},"x",1,null]`,
		`[]`, `{}`, `[`, `42`, ``, `{"method":5}`, `[{"id":{"nested":[1,2]}}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		calls, batch, err := parseRPC(data)
		if err != nil {
			if !errors.Is(err, derrors.InvalidArgument) {
				t.Fatalf("whole-request error %v is not InvalidArgument", err)
			}
			return
		}
		if len(calls) == 0 || len(calls) > MaxBatch || (!batch && len(calls) != 1) {
			t.Fatalf("%d calls, batch %v", len(calls), batch)
		}
		for _, c := range calls {
			if c.err == nil && c.Method == "" {
				t.Fatal("a call without a method has no error")
			}
			if c.err != nil && !errors.Is(c.err, derrors.InvalidArgument) {
				t.Fatalf("call error %v is not InvalidArgument", c.err)
			}
		}
	})
}
