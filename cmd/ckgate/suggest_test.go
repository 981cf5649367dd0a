package main

import (
	"strings"
	"testing"
)

// TestDidYouMean: a mistyped command or flag exits 2 and names the one
// meant; a name close to nothing gets no guess.
func TestDidYouMean(t *testing.T) {
	root := newRoot(t)
	for _, tc := range []struct {
		args []string
		want string // "": no suggestion
	}{
		{[]string{"stor"}, `unknown command "stor" (did you mean "store"?)`},
		{[]string{"inspct", root}, `(did you mean "inspect"?)`},
		{[]string{"store", "lx", root}, `unknown command "lx" (did you mean "ls"?)`},
		{[]string{"retention", "plna", root}, `(did you mean "plan"?)`},
		{[]string{"store", "ls", "--formt", "json", root}, `(did you mean "--format"?)`},
		{[]string{"store", "ls", root, "--recurse"}, `(did you mean "--recursive"?)`},
		{[]string{"inspect", root, "--jsn"}, `(did you mean "--json"?)`},
		{[]string{"--log-levl", "debug", "store", "ls", root}, `(did you mean "--log-level"?)`},
		{[]string{"help", "stor"}, `Did you mean "store"?`},
		{[]string{"xyzzy"}, ""},
		{[]string{"store", "ls", root, "--bogus"}, ""},
		{[]string{"store", "ls", "-x", root}, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := ckgate(t, Options{}, "", tc.args...)
			if tc.want == "" {
				r.wantErr(t, ExitUsage)
				if strings.Contains(strings.ToLower(r.stderr), "did you mean") {
					t.Fatalf("a guess for a name close to nothing:\n%s", r.stderr)
				}
				return
			}
			r.wantErr(t, ExitUsage, tc.want)
		})
	}
}
