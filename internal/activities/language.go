package activities

import (
	"golang.org/x/text/language"

	"socialstream/internal/derrors"
)

// maxLanguage bounds a language tag's length (BCP 47 tags in use are far
// shorter).
const maxLanguage = 35

var errLanguage = derrors.New(derrors.InvalidArgument, "language must be an ISO 639 language code (a BCP 47 tag such as en or pt-BR)")

// Language checks a language tag and returns it in its canonical form
// ("" for none): a well-formed BCP 47 tag of a known language.
func Language(tag string) (string, error) {
	if tag == "" {
		return "", nil
	}
	if len(tag) > maxLanguage {
		return "", errLanguage
	}
	t, err := language.Parse(tag)
	if err != nil {
		return "", errLanguage
	}
	if base, _ := t.Base(); t == language.Und || base == (language.Base{}) || base.String() == "und" {
		return "", errLanguage
	}
	return t.String(), nil
}
