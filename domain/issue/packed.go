package issue

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/customfield"
)

// errPacked is a packed labels or values text the parser does not understand.
var errPacked = errors.New("malformed packed list column")

// packed reads the packed texts of the issue reads (labels, custom field values, field
// definitions): ids as 36 characters of text, strings as their byte length, a colon
// and the bytes. Strings are slices of the row's text, not copies. Packed texts rather
// than arrays: pgx decodes each array column through an array plan of its own, which
// costs more than parsing one text.
type packed struct{ s string }

func (p *packed) id() (uuid.UUID, error) {
	if len(p.s) < 36 {
		return uuid.UUID{}, errPacked
	}
	id, err := uuid.Parse(p.s[:36])
	p.s = p.s[36:]
	return id, err
}

func (p *packed) byte() (byte, error) {
	if p.s == "" {
		return 0, errPacked
	}
	c := p.s[0]
	p.s = p.s[1:]
	return c, nil
}

// upto returns the text before the next c and moves past c.
func (p *packed) upto(c byte) (string, error) {
	i := strings.IndexByte(p.s, c)
	if i < 0 {
		return "", errPacked
	}
	v := p.s[:i]
	p.s = p.s[i+1:]
	return v, nil
}

func (p *packed) str() (string, error) {
	n, err := p.upto(':')
	if err != nil {
		return "", err
	}
	size, err := strconv.Atoi(n)
	if err != nil || size < 0 || size > len(p.s) {
		return "", errPacked
	}
	v := p.s[:size]
	p.s = p.s[size:]
	return v, nil
}

// packedEpoch is the day the packed dates count from.
var packedEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// parseValues reads a row's custom field values into the Value at(field) returns (nil:
// skip it). Per value: the field id, then by type T and the text, N, the number and
// ';', D, the days since 2000-01-01 and ';', B and 1 or 0, O, the option id and its
// label, or '-' for none: issues.custom_packed always writes '-', and listScan
// takes the label from the definitions.
func parseValues(s string, at func(uuid.UUID) *customfield.Value) error {
	p := packed{s}
	for p.s != "" {
		field, err := p.id()
		if err != nil {
			return err
		}
		var v customfield.Value
		tag, err := p.byte()
		if err != nil {
			return err
		}
		switch tag {
		case 'T':
			t, err := p.str()
			if err != nil {
				return err
			}
			v.Text = &t
		case 'N':
			n, err := p.upto(';')
			if err != nil {
				return err
			}
			v.Number = &n
		case 'D':
			n, err := p.upto(';')
			if err != nil {
				return err
			}
			days, err := strconv.Atoi(n)
			if err != nil {
				return errPacked
			}
			d := packedEpoch.AddDate(0, 0, days)
			v.Date = &d
		case 'B':
			c, err := p.byte()
			if err != nil {
				return err
			}
			b := c == '1'
			v.Bool = &b
		case 'O':
			option, err := p.id()
			if err != nil {
				return err
			}
			v.OptionID = &option
			if strings.HasPrefix(p.s, "-") {
				p.s = p.s[1:]
			} else {
				label, err := p.str()
				if err != nil {
					return err
				}
				v.OptionLabel = &label
			}
		default:
			return errPacked
		}
		if dst := at(field); dst != nil {
			v.Set = true
			*dst = v
		}
	}
	return nil
}
