// Package markdown escapes untrusted text for the Markdown sweep writes
// to $GITHUB_STEP_SUMMARY, pull-request comments and summary.md:
//
//	fmt.Fprintf(w, "| %s | %s |\n", markdown.Cell(name), markdown.Cell(reason))
//
// Cell's output stays inside one table cell (or one list item, or a
// link's text) and renders as the text it was given: no line break, no
// heading, link, image, HTML tag, emphasis, code span or math. Text
// inside raw HTML (a <details><summary> line), where Markdown is not
// read and a backslash shows, goes through HTML instead:
//
//	fmt.Fprintf(w, "<details><summary>%s</summary>\n\n", markdown.HTML(title))
package markdown

import "strings"

// special are the ASCII punctuation characters that start or end
// Markdown or GitHub Flavored Markdown syntax inside a line: escapes,
// code spans, emphasis and strikethrough, links and images, raw HTML and
// entities, table cells, headings (after a newline Cell removes anyway)
// and GitHub's $ math. CommonMark lets every ASCII punctuation character
// be escaped with a backslash, and the escape shows the character.
const special = "\\`*_[]<>&|#!~$"

// Cell returns s escaped for one Markdown table cell: every special
// character backslash-escaped, and line breaks, tabs and other control
// characters (which would end the row) replaced by one space each.
func Cell(s string) string {
	if !strings.ContainsFunc(s, needsEscape) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' || r == '\u0085':
			b.WriteByte(' ')
		case r < 0x80 && strings.IndexByte(special, byte(r)) >= 0:
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func needsEscape(r rune) bool {
	return r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' || r == '\u0085' ||
		(r < 0x80 && strings.IndexByte(special, byte(r)) >= 0)
}

// HTML returns s escaped for text inside a raw HTML block of Markdown
// (the <summary> of a <details>): there Markdown is not read, so a
// backslash escape would show, and the text is HTML-escaped instead (&,
// < and >, all that text content needs: no tag or entity survives), with
// line breaks and other control characters replaced by one space each,
// since a blank line ends the HTML block.
func HTML(s string) string {
	return htmlText.Replace(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' || r == '\u0085' {
			return ' '
		}
		return r
	}, s))
}

var htmlText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
