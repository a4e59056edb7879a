package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

func TestRegisterAndLogin(t *testing.T) {
	e := newEnv(t)
	r := e.do("POST", "/auth/register", "", map[string]string{"username": "Mixed_Case1", "password": "correct horse", "displayName": "  Mixed  "})
	if r.status != http.StatusCreated {
		t.Fatalf("register: %d %s", r.status, r.raw)
	}
	entry := r.body["entry"].(map[string]any)
	if entry["preferredUsername"] != "Mixed_Case1" || entry["displayName"] != "Mixed" || entry["followersCount"] != 0.0 || entry["published"] == "" {
		t.Errorf("entry = %v", entry)
	}
	token := r.body["token"].(string)
	me := e.do("GET", "/social/rest/people/@me/@self", token, nil)
	if me.status != 200 || me.body["entry"].(map[string]any)["id"] != entry["id"] {
		t.Errorf("@me with the sign-up token: %d %s", me.status, me.raw)
	}

	login := e.do("POST", "/auth/login", "", map[string]string{"username": "mixed_case1", "password": "correct horse"})
	if login.status != http.StatusOK || login.body["entry"].(map[string]any)["id"] != entry["id"] {
		t.Fatalf("login any case: %d %s", login.status, login.raw)
	}
	if login.body["token"] == token {
		t.Error("login returned the same token as sign-up")
	}

	e.wantError(e.do("POST", "/auth/login", "", map[string]string{"username": "mixed_case1", "password": "wrong horse"}), 401)
	e.wantError(e.do("POST", "/auth/login", "", map[string]string{"username": "nobody_here", "password": "whatever1"}), 401)
	e.wantError(e.do("POST", "/auth/login", "", map[string]string{"username": "x", "password": "whatever1"}), 401)
}

func TestRegisterValidation(t *testing.T) {
	e := newEnv(t)
	e.register("taken_name")
	long := strings.Repeat("a", 31)
	tests := []struct {
		name   string
		body   any
		status int
	}{
		{"taken in another case", map[string]string{"username": "TAKEN_name", "password": "password1"}, 409},
		{"short username", map[string]string{"username": "ab", "password": "password1"}, 400},
		{"long username", map[string]string{"username": long, "password": "password1"}, 400},
		{"bad characters", map[string]string{"username": "no-dash", "password": "password1"}, 400},
		{"unicode username", map[string]string{"username": "名前名前", "password": "password1"}, 400},
		{"missing username", map[string]string{"password": "password1"}, 400},
		{"short password", map[string]string{"username": "okname", "password": "1234567"}, 400},
		{"long password", map[string]string{"username": "okname", "password": strings.Repeat("p", 129)}, 400},
		{"long display name", map[string]string{"username": "okname", "password": "password1", "displayName": strings.Repeat("d", 65)}, 400},
		{"control character in display name", map[string]string{"username": "okname", "password": "password1", "displayName": "a\u0007b"}, 400},
		{"wrong type", `{"username": 5, "password": "password1"}`, 400},
		{"malformed", `{"username": `, 400},
		{"array", `[1,2]`, 400},
		{"empty", ``, 400},
		{"trailing data", `{"username":"okname","password":"password1"} {}`, 400},
		{"too large", `{"username":"okname","password":"password1","displayName":"` + strings.Repeat("x", 1<<20) + `"}`, 413},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			e.wantError(e.do("POST", "/auth/register", "", tt.body), tt.status)
		})
	}
	e.t = t
	// None of the refused sign-ups created an account.
	e.wantError(e.do("POST", "/auth/login", "", map[string]string{"username": "okname", "password": "password1"}), 401)
}

func TestPasswordsLongerThanBcryptLimitCountInFull(t *testing.T) {
	e := newEnv(t)
	prefix := strings.Repeat("p", 100)
	if r := e.do("POST", "/auth/register", "", map[string]string{"username": "longpw", "password": prefix + "A"}); r.status != 201 {
		t.Fatalf("register: %d %s", r.status, r.raw)
	}
	e.wantError(e.do("POST", "/auth/login", "", map[string]string{"username": "longpw", "password": prefix + "B"}), 401)
	if r := e.do("POST", "/auth/login", "", map[string]string{"username": "longpw", "password": prefix + "A"}); r.status != 200 {
		t.Errorf("login with the right long password: %d", r.status)
	}
}

func TestRacingSignUpsOneWins(t *testing.T) {
	e := newEnv(t)
	const n = 8
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := "racer"
			if i%2 == 1 {
				name = "RACER"
			}
			statuses[i] = e.do("POST", "/auth/register", "", map[string]string{"username": name, "password": fmt.Sprintf("password%d", i)}).status
		}()
	}
	wg.Wait()
	won := 0
	for _, s := range statuses {
		switch s {
		case 201:
			won++
		case 409:
		default:
			t.Errorf("status %d, want 201 or 409", s)
		}
	}
	if won != 1 {
		t.Errorf("%d sign-ups won, want exactly 1 (%v)", won, statuses)
	}
}

func TestLogout(t *testing.T) {
	e := newEnv(t)
	u := e.register("leaver")
	login := e.do("POST", "/auth/login", "", map[string]string{"username": "leaver", "password": "password-leaver"})
	other := login.body["token"].(string)

	if r := e.do("POST", "/auth/logout", u.token, nil); r.status != http.StatusNoContent {
		t.Fatalf("logout: %d %s", r.status, r.raw)
	}
	e.wantError(e.do("GET", "/social/rest/people/@me/@self", u.token, nil), 401)
	e.wantError(e.do("POST", "/auth/logout", u.token, nil), 401)
	// Another session of the same user is untouched.
	if r := e.do("GET", "/social/rest/people/@me/@self", other, nil); r.status != 200 {
		t.Errorf("other session after logout: %d", r.status)
	}
	e.wantError(e.do("POST", "/auth/logout", "", nil), 401)
}
