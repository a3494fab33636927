package sso

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"golang.org/x/oauth2"
)

// githubUser is what GET /user answers that Taskweave reads.
type githubUser struct {
	ID        int64  `json:"id"`
	Login     string `json:"login"`
	Name      string `json:"name"`
	AvatarURL string `json:"avatar_url"`
}

// githubEmail is one entry of GET /user/emails.
type githubEmail struct {
	Email    string `json:"email"`
	Primary  bool   `json:"primary"`
	Verified bool   `json:"verified"`
}

// githubIdentity reads the GitHub user and its e-mail addresses. GitHub is OAuth 2.0,
// not OIDC: the subject is the numeric user id (logins can be renamed), and an e-mail
// counts as verified only when /user/emails says so. The primary verified address wins,
// else the first verified one.
func (s *Service) githubIdentity(ctx context.Context, tok *oauth2.Token) (identity, error) {
	var u githubUser
	if err := s.githubGet(ctx, tok, "/user", &u); err != nil {
		return identity{}, err
	}
	if u.ID == 0 {
		return identity{}, flowError(ReasonProviderError, fmt.Errorf("github: /user has no id"))
	}
	var emails []githubEmail
	if err := s.githubGet(ctx, tok, "/user/emails", &emails); err != nil {
		return identity{}, err
	}
	id := identity{Subject: strconv.FormatInt(u.ID, 10), Name: u.Name, Picture: u.AvatarURL}
	if id.Name == "" {
		id.Name = u.Login
	}
	for _, e := range emails {
		if e.Verified && (e.Primary || !id.EmailVerified) {
			id.Email, id.EmailVerified = e.Email, true
		}
	}
	if id.Email == "" {
		for _, e := range emails {
			if e.Primary {
				id.Email = e.Email
			}
		}
	}
	return id, nil
}

// githubGet reads one JSON document of GitHub's REST API.
func (s *Service) githubGet(ctx context.Context, tok *oauth2.Token, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.opts.GitHub.APIURL+path, nil)
	if err != nil {
		return flowError(ReasonProviderError, err)
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	tok.SetAuthHeader(req)
	res, err := s.client.Do(req)
	if err != nil {
		return flowError(ReasonProviderError, fmt.Errorf("github %s: %w", path, err))
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return flowError(ReasonProviderError, fmt.Errorf("github %s: %w", path, err))
	}
	if res.StatusCode != http.StatusOK {
		return flowError(ReasonProviderError, fmt.Errorf("github %s: status %d", path, res.StatusCode))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return flowError(ReasonProviderError, fmt.Errorf("github %s: %w", path, err))
	}
	return nil
}
