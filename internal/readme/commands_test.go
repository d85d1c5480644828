package readme

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCommands(t *testing.T) {
	f := func(md string, want ...string) {
		t.Helper()
		var got []string
		for _, c := range Commands([]byte(md)) {
			got = append(got, c.Text)
		}
		assert.Equal(t, want, got, md)
	}
	f("no code\n")
	f("```sh\nmake run   # serve\n```\n", "make run")
	f("```sh\n# a comment alone\n\nmake test\n```\n", "make test")
	f("```text\nmake run\n```\n```\nmake run\n```\n")
	f("```sh\ncurl 'http://x/?id=a#b'   # 200\n```\n", "curl 'http://x/?id=a#b'")
	f("```sh\necho \"a # b\" # c\n```\n", `echo "a # b"`)
	f("```sh\nmake compare \\\n  QUICK=1   # short\nmake run\n```\n", "make compare QUICK=1", "make run")
	f("text `make x`\n```sh\na#b\n```\n", "a#b")

	cmds := Commands([]byte("# t\n\n```sh\nmake run\n\nmake test\n```\n"))
	assert.Equal(t, []Command{{"make run", 4}, {"make test", 6}}, cmds)
}
