// Package flagenv gives each flag of a flag.FlagSet a fallback in the
// environment: -some-name reads $PREFIX_SOME_NAME. kvserver's KVPOOL_*
// and loadtest's LOADTEST_* variables both go through it, so they behave
// alike: a flag given on the command line wins over its variable, a
// variable that is set but empty counts as unset, and a value the flag
// refuses is an error naming the variable.
package flagenv

import (
	"flag"
	"fmt"
	"strings"
)

// Name is the variable flag falls back to: prefix, then the flag's name
// in capitals with dashes as underscores ("max-conns" → "KVPOOL_MAX_CONNS").
func Name(prefix, flag string) string {
	return prefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// Apply sets every flag of fs that the command line did not give from
// its variable (Name), where getenv returns a non-empty value for it; call
// it after fs.Parse. It returns the flags it set, each with its variable,
// and stops at the first value a flag refuses: the error names the
// variable and the value, and wraps the flag's own error.
func Apply(fs *flag.FlagSet, prefix string, getenv func(string) string) (map[string]string, error) {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	set := map[string]string{}
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := Name(prefix, f.Name)
		v := getenv(name)
		if err != nil || given[f.Name] || v == "" {
			return
		}
		if serr := fs.Set(f.Name, v); serr != nil {
			err = fmt.Errorf("$%s=%q: %w", name, v, serr)
			return
		}
		set[f.Name] = name
	})
	return set, err
}
