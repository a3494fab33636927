package comment

import "github.com/uptrace/bun"

// WithTx returns a Service that creates comments inside tx, the caller's transaction,
// as any comment: their Created events reach every consumer, COMMENT_ADDED rules
// included (unlike ForAutomation's). The service desk adds its system comments (an
// incident's postmortem, a ticket's e-mailed reply) this way, with its own rows.
func (s *Service) WithTx(tx bun.Tx) *Service {
	c := *s
	c.tx, c.automated = &tx, false
	return &c
}
