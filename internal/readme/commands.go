// Package readme reads the shell commands a Markdown page shows its
// reader. Its test runs every command of the repository's README.md on a
// fresh copy of the repository, so that a command the README shows and
// that no longer runs as written fails `make test`.
package readme

import (
	"bufio"
	"bytes"
	"strings"
)

// Command is one shell command of a page: its text as a reader would
// type it, continuation lines joined and its comment dropped.
type Command struct {
	Text string
	Line int // where it starts in the page, from 1
}

// Commands returns the commands of md's ```sh code blocks, in order.
// A line ending in a backslash continues on the next; a # that starts a
// word outside quotes starts a comment; blank and comment-only lines are
// not commands. Other code blocks (```text, ``` with no language) are
// not read: a page shows commands in sh blocks only.
func Commands(md []byte) []Command {
	var out []Command
	in := false
	var cur strings.Builder
	start := 0
	sc := bufio.NewScanner(bytes.NewReader(md))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		fence := strings.TrimSpace(line)
		if strings.HasPrefix(fence, "```") {
			in = !in && strings.TrimPrefix(fence, "```") == "sh"
			continue
		}
		if !in {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		text := strings.TrimRight(stripComment(line), " \t")
		if cont, ok := strings.CutSuffix(text, `\`); ok {
			cur.WriteString(strings.TrimSpace(cont) + " ")
			continue
		}
		cur.WriteString(strings.TrimSpace(text))
		if cmd := strings.TrimSpace(cur.String()); cmd != "" {
			out = append(out, Command{Text: cmd, Line: start})
		}
		cur.Reset()
	}
	return out
}

// stripComment drops a shell comment from line: a # at the start of a
// word (after a blank or at the line's start) outside single and double
// quotes.
func stripComment(line string) string {
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return line[:i]
		}
	}
	return line
}
