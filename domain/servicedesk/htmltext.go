package servicedesk

import (
	"io"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlText turns the HTML body of a mail without a text/plain part into the plain text a
// ticket holds: no markup survives (tags are dropped, entities decoded); the contents of
// script, style, head and template elements are dropped; block elements and <br> end
// lines, list items are lines starting with "- "; a link keeps its address as text, "label (url)",
// unless the label is the address; images keep their alt text. Runs of spaces collapse
// and at most one blank line separates paragraphs, as in the mail client's view.
func htmlText(r io.Reader) string {
	z := html.NewTokenizer(r)
	var b textBuilder
	skip := 0 // depth inside elements whose text is never shown
	var hrefs []string
	for {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.TextToken:
			if skip == 0 {
				b.text(string(z.Text()))
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			switch tok.DataAtom {
			case atom.Script, atom.Style, atom.Head, atom.Template, atom.Title:
				if tok.Type == html.StartTagToken {
					skip++
				}
			case atom.Br:
				b.newline()
			case atom.Li:
				b.breakLine()
				b.text("- ")
			case atom.A:
				hrefs = append(hrefs, attr(tok, "href"))
				b.markLink()
			case atom.Img:
				if alt := strings.TrimSpace(attr(tok, "alt")); alt != "" && skip == 0 {
					b.text(alt)
				}
			default:
				if isBlock(tok.DataAtom) {
					b.block()
				}
			}
		case html.EndTagToken:
			tok := z.Token()
			switch tok.DataAtom {
			case atom.Script, atom.Style, atom.Head, atom.Template, atom.Title:
				if skip > 0 {
					skip--
				}
			case atom.A:
				if n := len(hrefs); n > 0 {
					b.endLink(hrefs[n-1])
					hrefs = hrefs[:n-1]
				}
			default:
				if isBlock(tok.DataAtom) {
					b.block()
				}
			}
		}
	}
}

func attr(tok html.Token, name string) string {
	for _, a := range tok.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

func isBlock(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Header, atom.Footer, atom.Blockquote,
		atom.Pre, atom.Ul, atom.Ol, atom.Table, atom.Tr, atom.H1, atom.H2, atom.H3, atom.H4,
		atom.H5, atom.H6, atom.Hr, atom.Dl, atom.Dt, atom.Dd, atom.Address, atom.Center:
		return true
	}
	return false
}

// textBuilder collects words and line breaks, collapsing white space as a browser does.
type textBuilder struct {
	lines     []string
	line      strings.Builder
	space     bool // a space is due before the next word
	blank     bool // a blank line is due before the next word
	linkStart int  // the line's length where the open link's label begins, -1 if none
	linkLine  int  // the line the open link began on
}

func (b *textBuilder) text(s string) {
	if strings.TrimLeft(s, " \t\r\n\f") != s {
		b.space = true
	}
	words := strings.Fields(s)
	for i, w := range words {
		b.word(w, b.space || i > 0)
	}
	if len(words) > 0 {
		b.space = strings.TrimRight(s, " \t\r\n\f") != s
	}
}

func (b *textBuilder) word(w string, spaced bool) {
	if b.blank && (len(b.lines) > 0 || b.line.Len() > 0) {
		if b.line.Len() > 0 {
			b.flush()
		}
		if b.lines[len(b.lines)-1] != "" {
			b.lines = append(b.lines, "")
		}
	}
	b.blank = false
	if b.line.Len() > 0 && spaced {
		b.line.WriteByte(' ')
	}
	b.line.WriteString(w)
	b.space = false
}

func (b *textBuilder) flush() {
	b.lines = append(b.lines, strings.TrimRight(b.line.String(), " "))
	b.line.Reset()
}

func (b *textBuilder) newline() {
	b.flush()
	b.space = false
}

// breakLine ends the line, if it has anything.
func (b *textBuilder) breakLine() {
	if b.line.Len() > 0 {
		b.flush()
	}
	b.space = false
}

// block ends the line and asks for a blank line before the next word.
func (b *textBuilder) block() {
	if b.line.Len() > 0 {
		b.flush()
	}
	b.blank = true
	b.space = false
}

func (b *textBuilder) markLink() {
	b.linkStart, b.linkLine = b.line.Len(), len(b.lines)
}

func (b *textBuilder) endLink(href string) {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(strings.ToLower(href), "javascript:") || strings.HasPrefix(href, "#") {
		return
	}
	label := ""
	if b.linkLine == len(b.lines) && b.linkStart <= b.line.Len() {
		label = strings.TrimSpace(b.line.String()[b.linkStart:])
	}
	shown := strings.TrimPrefix(href, "mailto:")
	if label == href || label == shown {
		return
	}
	if label == "" {
		b.word(shown, b.line.Len() > 0)
		return
	}
	b.word("("+shown+")", true)
}

func (b *textBuilder) String() string {
	if b.line.Len() > 0 {
		b.flush()
	}
	return strings.TrimSpace(strings.Join(b.lines, "\n"))
}
