package account

import (
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/api/core/coretest"
)

func FuzzAuthBodies(f *testing.F) {
	for _, seed := range []string{
		`{"email":"a@example.com","displayName":"A","password":"password1"}`,
		`{"email":"a@example.com","displayName":" ","password":"        "}`,
		`{"email":1}`, `{`, `[]`, `null`, ``, `{"refreshToken":"x"}`, `{"currentPassword":"a","newPassword":"b"}`,
		`{"name":"ci","scope":"READ_ONLY","expiresAt":"2030-01-01T00:00:00Z"}`, `{"displayName":"\u0000"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		reg, err := parseRegister(core.Body{JSON: body})
		coretest.CheckDecodeResult(t, err)
		if err == nil {
			if !strings.Contains(reg.Email, "@") || strings.TrimSpace(reg.DisplayName) == "" {
				t.Fatalf("accepted bad registration %+v", reg)
			}
			n := utf8.RuneCountInString(reg.Password)
			if n < 8 || n > 128 || strings.TrimFunc(reg.Password, unicode.IsSpace) == "" {
				t.Fatalf("accepted bad password %q", reg.Password)
			}
		}
		_, _, err = parseLogin(core.Body{JSON: body})
		coretest.CheckDecodeResult(t, err)
		_, err = parseRefresh(core.Body{JSON: body})
		coretest.CheckDecodeResult(t, err)
		_, next, err := parsePasswordChange(core.Body{JSON: body})
		coretest.CheckDecodeResult(t, err)
		if err == nil && (utf8.RuneCountInString(next) < 8 || strings.TrimFunc(next, unicode.IsSpace) == "") {
			t.Fatalf("accepted bad new password %q", next)
		}
		tok, err := parseCreateToken(core.Body{JSON: body}, time.Now())
		coretest.CheckDecodeResult(t, err)
		if err == nil && (strings.TrimSpace(tok.Name) == "" || (tok.Scope != "READ_ONLY" && tok.Scope != "READ_WRITE")) {
			t.Fatalf("accepted bad token %+v", tok)
		}
		_, err = parseUpdateMe(core.Body{JSON: body})
		coretest.CheckDecodeResult(t, err)
	})
}
