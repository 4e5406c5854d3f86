package template

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

const (
	shellL    = "risk.shell"
	evalL     = "risk.eval"
	destroyL  = "risk.destructive_fs"
	broadL    = "risk.broad_fs_write"
	externalL = "risk.external_side_effect"
	secretL   = "risk.secret_touching"
	networkL  = "risk.network"
	longL     = "risk.long_running"
	platformL = "risk.platform_specific"
)

func TestRiskLabels(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		want []string
	}{
		// shell
		{"bash script", []string{"bash", "script.sh"}, []string{shellL}},
		{"zsh by path", []string{"/bin/zsh", "x.zsh"}, []string{shellL}},
		{"fish bare", []string{"fish"}, []string{shellL}},
		{"shell name folded", []string{"Bash", "-c", "x"}, []string{shellL, evalL}},
		{"not a shell", []string{"bashful", "-c", "x"}, nil},

		// eval
		{"bash -lc", []string{"bash", "-lc", "x"}, []string{shellL, evalL}},
		{"sh -ec", []string{"sh", "-ec", "x"}, []string{shellL, evalL}},
		{"bash -c after -o", []string{"bash", "-o", "pipefail", "-c", "x"}, []string{shellL, evalL}},
		{"node -e", []string{"node", "-e", "1"}, []string{evalL}},
		{"node --eval", []string{"node", "--eval", "1"}, []string{evalL}},
		{"node --eval=", []string{"node", "--eval=1"}, []string{evalL}},
		{"deno -e", []string{"deno", "-e", "1"}, []string{evalL}},
		{"bun --eval", []string{"bun", "--eval", "1"}, []string{evalL}},
		{"node script", []string{"node", "script.js"}, nil},
		{"node -c is not eval", []string{"node", "-c", "script.js"}, nil},
		{"python3 by path", []string{"/usr/bin/python3", "-c", "print(1)"}, []string{evalL}},
		{"python -Bc cluster", []string{"python", "-Bc", "print(1)"}, []string{evalL}},
		{"perl -e", []string{"perl", "-e", "print 1"}, []string{evalL}},
		{"ruby -e", []string{"ruby", "-e", "p 1"}, []string{evalL}},
		{"python script", []string{"python", "tool.py", "--verbose"}, nil},
		{"python -m", []string{"python3", "-m", "json.tool"}, nil},

		// precommands run their argument words as a command
		{"sudo rm -rf /", []string{"sudo", "rm", "-rf", "/"}, []string{destroyL}},
		{"sudo -u root rm", []string{"sudo", "-u", "root", "rm", "-r", "x"}, []string{destroyL}},
		{"env assignments then curl", []string{"env", "-u", "HOME", "A=1", "B=2", "curl", "x"}, []string{networkL}},
		{"timeout duration then rm", []string{"timeout", "-s", "KILL", "5", "rm", "-r", "x"}, []string{destroyL}},
		{"timeout's duration is not the command", []string{"timeout", "5s", "true"}, nil},
		{"xargs rm", []string{"xargs", "-0", "-n", "1", "rm", "-f"}, []string{destroyL}},
		{"nested sudo env nice bash -c", []string{"sudo", "env", "X=1", "nice", "-n", "5", "bash", "-c", "x"}, []string{shellL, evalL}},
		{"sudo -- git push", []string{"sudo", "--", "git", "push"}, []string{externalL, networkL}},
		{"flock file then rm", []string{"flock", "/tmp/l", "rm", "-rf", "d"}, []string{destroyL}},
		{"nohup with nothing", []string{"nohup"}, nil},
		{"env alone", []string{"env"}, nil},

		// destructive_fs
		{"rm plain file", []string{"rm", "file.txt"}, nil},
		{"rm -rf", []string{"rm", "-rf", "build"}, []string{destroyL}},
		{"rm -r", []string{"rm", "-r", "build"}, []string{destroyL}},
		{"rm -f", []string{"rm", "-f", "a"}, []string{destroyL}},
		{"rm -vR", []string{"rm", "-vR", "a"}, []string{destroyL}},
		{"rm --recursive", []string{"rm", "--recursive", "a"}, []string{destroyL}},
		{"rm --force", []string{"rm", "--force", "a"}, []string{destroyL}},
		{"find -delete", []string{"find", ".", "-name", "*.tmp", "-delete"}, []string{destroyL}},
		{"find lists", []string{"find", ".", "-name", "*.tmp"}, nil},
		{"rm -i", []string{"rm", "-i", "a"}, nil},
		{"rm --verbose", []string{"rm", "--verbose", "a"}, nil},
		{"rm absolute", []string{"rm", "/tmp/x"}, []string{destroyL}},
		{"rm root", []string{"/bin/rm", "/"}, []string{destroyL}},
		{"rm home", []string{"rm", "~"}, []string{destroyL}},
		{"rm under home", []string{"rm", "~/x"}, []string{destroyL}},
		{"rm dot slash", []string{"rm", "./"}, []string{destroyL}},
		{"rm parent", []string{"rm", "../"}, []string{destroyL}},
		{"rm brace", []string{"rm", "{dir}"}, []string{destroyL}},
		{"rm relative", []string{"rm", "./build", "../x"}, nil},
		{"unlink absolute", []string{"unlink", "/tmp/x"}, nil},

		// broad_fs_write
		{"mv relative", []string{"mv", "a", "b"}, nil},
		{"cp to absolute", []string{"cp", "-r", "src", "/opt/x"}, []string{broadL}},
		{"mv from home", []string{"mv", "~/a", "b"}, []string{broadL}},
		{"rsync narrow", []string{"rsync", "-a", "src/", "host:dst"}, []string{networkL}},
		{"rsync root", []string{"rsync", "-a", "/", "backup"}, []string{broadL, networkL}},
		{"ln absolute", []string{"ln", "-s", "/etc", "x"}, nil},

		// external_side_effect
		{"gh", []string{"gh", "pr", "create"}, []string{externalL}},
		{"glab", []string{"glab", "mr", "list"}, []string{externalL}},
		{"hub", []string{"hub", "browse"}, []string{externalL}},
		{"kubectl", []string{"kubectl", "apply", "-f", "x.yaml"}, []string{externalL}},
		{"terraform", []string{"terraform", "apply"}, []string{externalL}},
		{"git push", []string{"git", "push"}, []string{externalL, networkL}},
		{"git -C push", []string{"git", "-C", "repo", "push"}, []string{externalL, networkL}},
		{"git -c push", []string{"git", "-c", "x=y", "--no-pager", "push", "origin"}, []string{externalL, networkL}},
		{"git commit message push", []string{"git", "commit", "-m", "push"}, nil},
		{"npm publish", []string{"npm", "publish"}, []string{externalL, networkL}},
		{"npm publish after flags", []string{"npm", "--tag", "next", "publish"}, []string{externalL, networkL}},
		{"pnpm login", []string{"pnpm", "login"}, []string{externalL, networkL}},
		{"yarn logout", []string{"yarn", "logout"}, []string{externalL, networkL}},
		{"npm deprecate", []string{"npm", "deprecate", "pkg@1", "old"}, []string{externalL, networkL}},
		{"npm install", []string{"npm", "install"}, []string{networkL}},
		{"cargo publish", []string{"cargo", "publish"}, []string{networkL}},

		// secret_touching
		{"pass", []string{"pass", "show", "x"}, []string{secretL}},
		{"gpg", []string{"gpg", "--decrypt", "f"}, []string{secretL}},
		{"ssh-add", []string{"ssh-add"}, []string{secretL}},
		{"api-key flag", []string{"tool", "--api-key=x"}, []string{secretL}},
		{"apikey flag", []string{"tool", "--apikey", "x"}, []string{secretL}},
		{"brace secret", []string{"echo", "{secret_token}"}, []string{secretL}},
		{"env var name", []string{"printenv", "GITHUB_TOKEN"}, []string{secretL}},
		{"dotenv", []string{"cat", ".env"}, []string{secretL}},
		{"dotenv in dir", []string{"cat", "config/.env.local"}, []string{secretL}},
		{"ssh key path", []string{"cat", "keys/ssh-key.pub"}, []string{secretL}},
		{"password in script", []string{"sh", "-c", "read password"}, []string{shellL, evalL, secretL}},
		{"command word", []string{"secret-tool", "lookup", "x"}, []string{secretL}},
		{"tokenizer", []string{"run", "tokenizer"}, nil},
		{"suffix env", []string{"cat", "config.env"}, nil},
		{"passport", []string{"echo", "passport"}, nil},

		// network
		{"curl", []string{"curl", "https://x"}, []string{networkL}},
		{"wget", []string{"wget", "u"}, []string{networkL}},
		{"ssh", []string{"ssh", "host"}, []string{networkL}},
		{"scp", []string{"scp", "a", "host:b"}, []string{networkL}},
		{"sftp", []string{"sftp", "host"}, []string{networkL}},
		{"nc", []string{"nc", "-l", "80"}, []string{networkL}},
		{"ncat", []string{"ncat", "h", "1"}, []string{networkL}},
		{"telnet", []string{"telnet", "h"}, []string{networkL}},
		{"ftp", []string{"ftp", "h"}, []string{networkL}},
		{"git clone", []string{"git", "clone", "u"}, []string{networkL}},
		{"git fetch", []string{"git", "fetch"}, []string{networkL}},
		{"git pull", []string{"git", "--no-pager", "pull"}, []string{networkL}},
		{"git ls-remote", []string{"/usr/bin/git", "ls-remote", "u"}, []string{networkL}},
		{"git status", []string{"git", "status"}, nil},
		{"git bare", []string{"git"}, nil},
		{"pip", []string{"pip", "install", "x"}, []string{networkL}},
		{"pip3", []string{"pip3", "list"}, []string{networkL}},
		{"yarn", []string{"yarn"}, []string{networkL}},

		// long_running
		{"sleep", []string{"sleep", "5"}, []string{longL}},
		{"watch", []string{"watch", "ls"}, []string{longL}},
		{"tail -f", []string{"tail", "-f", "log"}, []string{longL}},
		{"tail -F", []string{"tail", "-F", "log"}, []string{longL}},
		{"tail -qf cluster", []string{"tail", "-qf", "log"}, []string{longL}},
		{"tail --follow", []string{"tail", "--follow", "log"}, []string{longL}},
		{"tail --follow=name", []string{"tail", "--follow=name", "log"}, []string{longL}},
		{"tail", []string{"tail", "log"}, nil},
		{"tail -n", []string{"tail", "-n", "5", "log"}, nil},
		{"--watch", []string{"vite", "--watch"}, []string{longL}},
		{"--serve", []string{"tool", "--serve"}, []string{longL}},
		{"serve", []string{"hugo", "SERVE"}, []string{longL}},
		{"server is not serve", []string{"tool", "server"}, nil},

		// platform_specific
		{"open by path", []string{"/usr/bin/open", "x"}, []string{platformL}},
		{"windows path", []string{`C:\Windows\System32\CMD.EXE`, "dir"}, []string{platformL}},
		{"openssl", []string{"openssl", "version"}, nil},

		// a command wrapped after --: its labels count, the wrapper's stay
		{"wrapped shell", []string{"pi-actors", "stage", "validate", "dir=.", "--", "bash", "-c", "{command}"}, []string{shellL, evalL}},
		{"wrapped rm", []string{"xargs", "--", "rm", "-rf"}, []string{destroyL}},
		{"wrapper labels kept", []string{"tool", "--serve", "--", "curl", "u"}, []string{networkL, longL}},
		{"git path after --", []string{"git", "checkout", "--", "src/x.go"}, nil},
		{"trailing --", []string{"bash", "x.sh", "--"}, []string{shellL}},

		{"empty argv", nil, nil},
	}
	for _, name := range []string{"systemctl", "launchctl", "osascript", "open", "xdg-open",
		"powershell", "pwsh", "cmd.exe", "apt", "apt-get", "dnf", "yum", "brew",
		"pacman", "apk", "xclip", "wl-copy"} {
		tests = append(tests, struct {
			name string
			argv []string
			want []string
		}{name, []string{name}, []string{platformL}})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := RiskLabels(tt.argv, "")
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("RiskLabels(%q) = %q, want %q", tt.argv, got, tt.want)
			}
		})
	}
}

func TestRiskLabelsOrder(t *testing.T) {
	tests := []struct {
		argv []string
		want []string
	}{
		{[]string{"rsync", "--watch", "{api_token}", "/"}, []string{broadL, secretL, networkL, longL}},
		{[]string{"git", "-C", "/srv", "push", "--token=x", "serve"}, []string{externalL, secretL, networkL, longL}},
		{[]string{"bash", "--watch", "-c", "rm -rf /", "secret"}, []string{shellL, evalL, secretL, longL}},
		{[]string{"rm", "-rf", "--watch", "{token}", "/"}, []string{destroyL, secretL, longL}},
	}
	for _, tt := range tests {
		got, _ := RiskLabels(tt.argv, "")
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("RiskLabels(%q) = %q, want %q", tt.argv, got, tt.want)
		}
	}
}

// Every label of riskOrder needs a check and every check a place in the order,
// or a label would silently never be reported.
func TestRiskChecksCoverOrder(t *testing.T) {
	if len(riskChecks) != len(riskOrder) {
		t.Fatalf("riskChecks has %d labels, riskOrder %d", len(riskChecks), len(riskOrder))
	}
	for _, l := range riskOrder {
		if riskChecks[l] == nil {
			t.Errorf("no check for %s", l)
		}
	}
}

func TestRiskWarnings(t *testing.T) {
	const (
		shellTail  = " are trusted executable content and are not sandboxed by command-template argv splitting. Mitigation: keep scripts local, reviewed, and parameterized with explicit placeholders."
		evalTail   = "code strings are trusted executable content and are not sandboxed. Mitigation: prefer a checked-in script file or keep eval input fixed and reviewed."
		rmTail     = ": removes filesystem paths; verify placeholders and paths before running trusted destructive commands. Mitigation: constrain path placeholders and consider dry-run or explicit confirmation."
		broadTail  = ": mutates broad filesystem paths; verify placeholders and paths before running trusted commands. Mitigation: constrain path placeholders and prefer narrow source/destination paths."
		shellCmd   = "shell command strings"
		shellFiles = "shell scripts"
	)
	tests := []struct {
		name  string
		argv  []string
		label string
		want  []string
	}{
		{"bash -c", []string{"bash", "-lc", "x"}, "", []string{"bash: invokes bash; " + shellCmd + shellTail}},
		{"bash script", []string{"bash", "s.sh"}, "", []string{"bash: invokes bash; " + shellFiles + shellTail}},
		{"shell by path keeps argv0, names basename", []string{"/bin/sh", "-c", "x"}, "",
			[]string{"/bin/sh: invokes sh; " + shellCmd + shellTail}},
		{"labelled shell", []string{"zsh", "s.zsh"}, "build", []string{"build: invokes zsh; " + shellFiles + shellTail}},
		{"repeated -c warns once", []string{"bash", "-c", "-c", "x"}, "", []string{"bash: invokes bash; " + shellCmd + shellTail}},
		{"node eval", []string{"node", "-e", "1"}, "", []string{"node: invokes node eval mode; " + evalTail}},
		{"bun eval labelled", []string{"bun", "--eval", "1"}, "js", []string{"js: invokes bun eval mode; " + evalTail}},
		{"python code-eval", []string{"/usr/bin/python3", "-c", "1"}, "",
			[]string{"/usr/bin/python3: invokes python3 code-eval mode; " + evalTail}},
		{"perl code-eval", []string{"perl", "-e", "1"}, "p", []string{"p: invokes perl code-eval mode; " + evalTail}},
		{"rm -rf", []string{"rm", "-rf", "/"}, "", []string{"rm" + rmTail}},
		{"rm labelled", []string{"rm", "/tmp/x"}, "clean", []string{"clean" + rmTail}},
		{"cp broad", []string{"cp", "a", "/opt/b"}, "", []string{"cp" + broadTail}},
		{"rsync broad", []string{"rsync", "~/a", "/b"}, "sync", []string{"sync" + broadTail}},
		{"node script", []string{"node", "s.js"}, "", nil},
		{"rm plain", []string{"rm", "a"}, "", nil},
		{"mv narrow", []string{"mv", "a", "b"}, "", nil},
		{"network only", []string{"curl", "https://x"}, "", nil},
		{"external only", []string{"git", "push"}, "", nil},
		{"secret only", []string{"pass", "x"}, "", nil},
		{"long only", []string{"sleep", "1"}, "", nil},
		{"platform only", []string{"brew", "install", "x"}, "", nil},
		{"empty argv", nil, "x", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := RiskLabels(tt.argv, tt.label)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("warnings of %q = %q,\nwant %q", tt.argv, got, tt.want)
			}
		})
	}
}

// A warning must be one the diagnostics classify as a warning (see the
// severity row of PARITY A2), so its wording has to keep those markers.
func TestRiskWarningsCarrySeverityMarkers(t *testing.T) {
	for _, argv := range [][]string{
		{"bash", "x"}, {"node", "-e", "1"}, {"python", "-c", "1"}, {"rm", "-r", "x"}, {"cp", "/a", "b"},
	} {
		_, w := RiskLabels(argv, "")
		if len(w) != 1 {
			t.Fatalf("%q: %d warnings", argv, len(w))
		}
		text := strings.ToLower(w[0])
		if !slices.ContainsFunc([]string{"invokes bash", "eval", "destructive", "broad filesystem"},
			func(m string) bool { return strings.Contains(text, m) }) {
			t.Errorf("%q: warning %q has no severity marker", argv, w[0])
		}
	}
}

func BenchmarkRiskLabels(b *testing.B) {
	argv := []string{"pi", "--model", "openai/gpt-5", "--thinking", "medium", "-p",
		"Review the diff in {repo} and report the risks you find, one per line."}
	b.ReportAllocs()
	for b.Loop() {
		RiskLabels(argv, "review")
	}
}

// A precommand's command carries its warning: sudo rm -rf / is an rm.
func TestRiskPrecommandWarning(t *testing.T) {
	_, warnings := RiskLabels([]string{"sudo", "-n", "timeout", "30", "rm", "-rf", "/"}, "")
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "sudo: removes filesystem paths") {
		t.Errorf("warnings %q, want the rm's, naming the leaf (sudo)", warnings)
	}
}

// TestRiskWrappedNoWarning: a command wrapped after -- adds labels, not
// the wrapped command's warning (the wrapper is the audited boundary).
func TestRiskWrappedNoWarning(t *testing.T) {
	labels, warnings := RiskLabels([]string{"pi-actors", "stage", "validate", "--", "bash", "-c", "make"}, "")
	if len(labels) != 2 || len(warnings) != 0 {
		t.Errorf("labels %q warnings %q, want shell+eval and no warning", labels, warnings)
	}
}

// A plan built only to check a template (Options.NoLookup: the kernel's
// check of a spawn) resolves no command — its supervisor does, with the
// run's PATH — and still labels its risks.
func TestNoLookupLeavesExeEmpty(t *testing.T) {
	node, err := Parse("sh -c {cmd}")
	if err != nil {
		t.Fatal(err)
	}
	for _, noLookup := range []bool{false, true} {
		plan, err := NewPlan(node, Values{"cmd": "true"}, Options{NoLookup: noLookup})
		if err != nil {
			t.Fatal(err)
		}
		s := plan.Root
		if got := s.Exe != ""; got == noLookup {
			t.Errorf("NoLookup %v: Exe %q", noLookup, s.Exe)
		}
		if !slices.Contains(s.Risk, shellL) {
			t.Errorf("NoLookup %v: risk %v lacks %s", noLookup, s.Risk, shellL)
		}
	}
}
