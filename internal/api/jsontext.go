package api

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"socialstream/internal/derrors"
)

// checkText refuses a JSON body whose strings hold invalid UTF-8 or a lone
// surrogate escape (\ud800 with no low half after it, say), naming the
// field as a JSON Pointer: encoding/json would take either as U+FFFD, and
// store what the client never meant. A body that is not JSON at all is
// left to the decoder's own error.
func checkText(data []byte) error {
	d := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	for {
		switch d.PeekKind() {
		case 0: // the end, or not JSON: the decoder's to tell
			return nil
		case '"':
			v, err := d.ReadValue()
			if err != nil {
				return nil
			}
			if !validString(v) {
				field := string(d.StackPointer())
				if field == "" {
					field = "/"
				}
				return derrors.New(derrors.InvalidArgument, fmt.Sprintf("the text at %s is not valid UTF-8 (invalid bytes, or a lone surrogate escape)", field))
			}
		default:
			if _, err := d.ReadToken(); err != nil {
				return nil
			}
		}
	}
}

// validString reports whether a raw JSON string (quotes and escapes
// included) is valid UTF-8 with every \u surrogate escape paired.
func validString(raw []byte) bool {
	if !utf8.Valid(raw) {
		return false
	}
	pending := false // a high surrogate waits for its low half
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			if pending {
				return false
			}
			continue
		}
		i++
		if i >= len(raw) || raw[i] != 'u' {
			if pending {
				return false
			}
			continue
		}
		if i+4 >= len(raw) {
			return false
		}
		n, err := strconv.ParseUint(string(raw[i+1:i+5]), 16, 16)
		if err != nil {
			return false
		}
		i += 4
		r := rune(n)
		switch {
		case pending && utf16.IsSurrogate(r) && r >= 0xDC00:
			pending = false
		case pending, !utf16.IsSurrogate(r):
			if pending {
				return false
			}
		case r < 0xDC00:
			pending = true
		default: // a low half alone
			return false
		}
	}
	return !pending
}
