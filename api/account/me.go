package account

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/locale"
	"github.com/taskweave/taskweave/domain/notify"
)

type updateMeRequest struct {
	DisplayName *string `json:"displayName"`
	AvatarURL   *string `json:"avatarUrl"`
}

// maxAvatarURL bounds avatarUrl (UpdateMeRequest in api/openapi/00-core.yaml).
const maxAvatarURL = 512

func parseUpdateMe(body core.Body) (auth.ProfileChange, error) {
	var r updateMeRequest
	if err := body.Decode(&r); err != nil {
		return auth.ProfileChange{}, err
	}
	if r.DisplayName == nil && r.AvatarURL == nil {
		return auth.ProfileChange{}, core.Required("displayName")
	}
	var f core.Fields
	if r.DisplayName != nil {
		f.Text("displayName", *r.DisplayName, true, core.MaxName)
	}
	if r.AvatarURL != nil && *r.AvatarURL != "" { // "" clears the avatar
		f.Text("avatarUrl", *r.AvatarURL, false, maxAvatarURL)
		f.Link("avatarUrl", *r.AvatarURL)
	}
	return auth.ProfileChange{DisplayName: r.DisplayName, AvatarURL: r.AvatarURL}, f.Err()
}

func (s *handlers) updateMe(c *fiber.Ctx) error {
	in, err := parseUpdateMe(core.BodyOf(c))
	if err != nil {
		return err
	}
	u, err := s.Auth.UpdateProfile(c.UserContext(), core.Principal(c), in, core.Meta(c))
	if err != nil {
		return err
	}
	return c.JSON(core.UserResponseFor(c, u))
}

func (s *handlers) deleteMe(c *fiber.Ctx) error {
	p := core.Principal(c)
	if err := s.Auth.Delete(c.UserContext(), p, p.UserID, core.Meta(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

type passwordRequest struct {
	CurrentPassword *string `json:"currentPassword"`
	NewPassword     *string `json:"newPassword"`
}

func parsePasswordChange(body core.Body) (current, next string, err error) {
	var r passwordRequest
	if err := body.Decode(&r); err != nil {
		return "", "", err
	}
	if r.CurrentPassword == nil {
		return "", "", core.Required("currentPassword")
	}
	if r.NewPassword == nil {
		return "", "", core.Required("newPassword")
	}
	var f core.Fields
	f.Password("newPassword", *r.NewPassword)
	return *r.CurrentPassword, *r.NewPassword, f.Err()
}

func (s *handlers) changePassword(c *fiber.Ctx) error {
	current, next, err := parsePasswordChange(core.BodyOf(c))
	if err != nil {
		return err
	}
	if err := s.Auth.ChangePassword(c.UserContext(), core.Principal(c), current, next, core.Meta(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

type languageRequest struct {
	Language *string `json:"language"`
}

func (s *handlers) setLanguage(c *fiber.Ctx) error {
	var r languageRequest
	if err := core.Decode(c, &r); err != nil {
		return err
	}
	if r.Language == nil || !locale.Supported(*r.Language) {
		return core.BadRequest("UNSUPPORTED_LANGUAGE")
	}
	u, err := s.Auth.SetLanguage(c.UserContext(), core.Principal(c), *r.Language)
	if err != nil {
		return err
	}
	return c.JSON(core.UserResponseFor(c, u))
}

type preferenceJSON struct {
	Type  string `json:"type"`
	InApp bool   `json:"inApp"`
	Email bool   `json:"email"`
}

type preferencesJSON struct {
	Preferences []preferenceJSON `json:"preferences"`
	// Digest is OFF, HOURLY or DAILY (notify.DigestModes).
	Digest string `json:"digest"`
}

func toPreferencesJSON(ps []notify.Preference, digest string) preferencesJSON {
	out := preferencesJSON{Preferences: make([]preferenceJSON, 0, len(ps)), Digest: digest}
	for _, p := range ps {
		out.Preferences = append(out.Preferences, preferenceJSON{Type: p.Type, InApp: p.InApp, Email: p.Email})
	}
	return out
}

func (s *handlers) getPreferences(c *fiber.Ctx) error {
	uid := core.Principal(c).UserID
	ps, err := notify.Preferences(c.UserContext(), s.DB.Bun, uid)
	if err != nil {
		return err
	}
	digest, err := notify.Digest(c.UserContext(), s.DB.Bun, uid)
	if err != nil {
		return err
	}
	return c.JSON(toPreferencesJSON(ps, digest))
}

type preferenceInput struct {
	Type  *string `json:"type"`
	InApp *bool   `json:"inApp"`
	Email *bool   `json:"email"`
}

// parsePreferences decodes PUT /me/notification-preferences: the changed types and the
// digest mode ("" when left out). A member left out keeps today's value; a type named
// twice keeps its last entry; at least one of preferences and digest is required.
func parsePreferences(body core.Body, current []notify.Preference) ([]notify.Preference, string, error) {
	var r struct {
		Preferences *[]preferenceInput `json:"preferences"`
		Digest      *string            `json:"digest"`
	}
	if err := body.Decode(&r); err != nil {
		return nil, "", err
	}
	digest := ""
	if r.Digest != nil {
		if !notify.KnownDigest(*r.Digest) {
			return nil, "", core.BadRequest("INVALID_ENUM", "field", "digest", "values", strings.Join(notify.DigestModes, ", "))
		}
		digest = *r.Digest
	}
	if r.Preferences == nil {
		if r.Digest != nil {
			return nil, digest, nil
		}
		return nil, "", core.Required("preferences")
	}
	now := map[string]notify.Preference{}
	for _, p := range current {
		now[p.Type] = p
	}
	byType := map[string]notify.Preference{}
	var order []string
	for _, in := range *r.Preferences {
		if in.Type == nil {
			return nil, "", core.Required("type")
		}
		if !notify.KnownType(*in.Type) {
			return nil, "", core.BadRequest("UNKNOWN_NOTIFICATION_TYPE", "type", *in.Type)
		}
		p := now[*in.Type]
		if in.InApp != nil {
			p.InApp = *in.InApp
		}
		if in.Email != nil {
			p.Email = *in.Email
		}
		if _, seen := byType[p.Type]; !seen {
			order = append(order, p.Type)
		}
		byType[p.Type] = p
	}
	out := make([]notify.Preference, 0, len(order))
	for _, t := range order {
		out = append(out, byType[t])
	}
	return out, digest, nil
}

func (s *handlers) putPreferences(c *fiber.Ctx) error {
	uid := core.Principal(c).UserID
	current, err := notify.Preferences(c.UserContext(), s.DB.Bun, uid)
	if err != nil {
		return err
	}
	in, digest, err := parsePreferences(core.BodyOf(c), current)
	if err != nil {
		return err
	}
	ps, digest, err := notify.UpdatePreferences(c.UserContext(), s.DB.Bun, uid, in, digest)
	if err != nil {
		return err
	}
	return c.JSON(toPreferencesJSON(ps, digest))
}
