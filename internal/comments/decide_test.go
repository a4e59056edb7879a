package comments

import (
	"errors"
	"testing"

	"socialstream/internal/derrors"
)

func TestDecideComment(t *testing.T) {
	gone, suspended, hidden := errors.New("gone"), errors.New("suspended"), errors.New("hidden")
	mine := &Comment{UserID: "ann", Seq: 7}
	other := &Comment{UserID: "bob", Seq: 7}
	for _, c := range []struct {
		name      string
		f         commentFacts
		write     bool
		err       error
		retryable bool
	}{
		{"made", commentFacts{user: "ann", seq: 7, prior: &Comment{}}, true, nil, false},
		{"the activity gone", commentFacts{user: "ann", seq: 7, activity: gone, prior: &Comment{}}, false, gone, false},
		{"its actor suspended", commentFacts{user: "ann", seq: 7, actor: suspended, prior: &Comment{}}, false, suspended, false},
		{"hidden from its actor", commentFacts{user: "ann", seq: 7, seen: hidden, prior: &Comment{}}, false, hidden, false},
		{"made before: a retry", commentFacts{user: "ann", seq: 7, taken: true, prior: mine, seen: hidden}, false, nil, false},
		{"an id another's", commentFacts{user: "ann", seq: 7, taken: true, prior: other}, false, nil, true},
	} {
		write, err := decideComment(c.f)
		switch {
		case write != c.write:
			t.Errorf("%s: write %v, want %v", c.name, write, c.write)
		case c.retryable && !errors.Is(err, derrors.Unavailable):
			t.Errorf("%s: %v, want a retry", c.name, err)
		case !c.retryable && err != c.err:
			t.Errorf("%s: %v, want %v", c.name, err, c.err)
		}
	}
}
