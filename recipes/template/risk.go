package template

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// riskOrder is the fixed order risk labels are reported in.
var riskOrder = []string{
	"risk.shell", "risk.eval", "risk.destructive_fs", "risk.broad_fs_write",
	"risk.external_side_effect", "risk.secret_touching", "risk.network",
	"risk.long_running", "risk.platform_specific",
}

// The labels are advisory: they describe what a trusted command is likely to
// do so that a reader can audit it, and they never block a run. They err on
// the side of reporting, like the TypeScript original they match.

// command is one leaf's argv as the risk rules see it.
type command struct {
	name string   // lowercased basename of the command word
	argv []string // as substituted; argv[0] is the command word as written
}

func (c command) args() []string { return c.argv[1:] }

// riskChecks holds one predicate per label of riskOrder; RiskLabels walks
// riskOrder, so the output order cannot drift from the declared one.
var riskChecks = map[string]func(command) bool{
	"risk.shell":                func(c command) bool { return shells[c.name] },
	"risk.eval":                 evalsCode,
	"risk.destructive_fs":       removesPaths,
	"risk.broad_fs_write":       writesBroadPaths,
	"risk.external_side_effect": changesExternalState,
	"risk.secret_touching":      touchesSecrets,
	"risk.network":              usesNetwork,
	"risk.long_running":         runsLong,
	"risk.platform_specific":    func(c command) bool { return platformCommands[c.name] },
}

// RiskLabels returns the advisory risk labels of one leaf's argv, in the
// fixed order, and its warnings. label names the leaf in warnings (the
// command word when empty).
func RiskLabels(argv []string, label string) ([]string, []string) {
	if len(argv) == 0 {
		return nil, nil
	}
	// The command and those it runs as they are: a precommand (sudo rm
	// -rf /, env X=1 curl …, timeout 5 rm -r …) runs its argument words
	// as a command, whose labels and warning are the leaf's.
	chain := []command{{name: executableName(argv[0]), argv: argv}}
	for len(chain) < maxWrapped {
		in, ok := unwrap(chain[len(chain)-1])
		if !ok {
			break
		}
		chain = append(chain, in)
	}
	// A command a tool runs after `--` (pi-actors stage validate --
	// bash -c …) carries its own risks: its labels count too, its
	// warnings do not (the tool is the boundary a reader audits).
	var inner *command
	last := chain[len(chain)-1].argv
	for i := 1; i < len(last)-1; i++ {
		if last[i] == "--" {
			inner = &command{name: executableName(last[i+1]), argv: last[i+1:]}
			break
		}
	}
	var labels []string
	for i, check := range riskCheckList {
		hit := inner != nil && check(*inner)
		for _, c := range chain {
			hit = hit || check(c)
		}
		if hit {
			labels = append(labels, riskOrder[i])
		}
	}
	who := label
	if who == "" {
		who = argv[0]
	}
	for _, c := range chain {
		if w := riskWarning(c, who); w != "" {
			return labels, []string{w}
		}
	}
	return labels, nil
}

// maxWrapped bounds a chain of precommands (sudo env timeout … rm).
const maxWrapped = 8

// precommands run the rest of their argv as a command, after their own
// options; valueOpts are the options whose value is the next word, and
// operands the words before the command (timeout's duration, flock's
// file).
var precommands = map[string]struct {
	valueOpts []string
	operands  int
}{
	"sudo":    {valueOpts: []string{"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "--user", "--group", "--host", "--prompt", "--chdir", "--role", "--type", "--other-user", "--command-timeout", "--close-from"}},
	"doas":    {valueOpts: []string{"-u", "-C"}},
	"env":     {valueOpts: []string{"-u", "-C", "-S", "--unset", "--chdir", "--split-string"}},
	"nice":    {valueOpts: []string{"-n", "--adjustment"}},
	"nohup":   {},
	"setsid":  {},
	"time":    {valueOpts: []string{"-f", "-o", "--format", "--output"}},
	"timeout": {valueOpts: []string{"-s", "-k", "--signal", "--kill-after"}, operands: 1},
	"stdbuf":  {valueOpts: []string{"-i", "-o", "-e", "--input", "--output", "--error"}},
	"ionice":  {valueOpts: []string{"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}},
	"chrt":    {valueOpts: []string{"-T", "-P", "-D"}, operands: 1},
	"taskset": {operands: 1},
	"flock":   {valueOpts: []string{"-w", "-E", "-c", "--timeout", "--conflict-exit-code"}, operands: 1},
	"xargs":   {valueOpts: []string{"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--max-lines", "--replace"}},
	"watch":   {valueOpts: []string{"-n", "-d", "--interval"}},
}

// unwrap returns the command a precommand runs, if c is one and names a
// command: its options (with their values), assignments for env and its
// operands skipped.
func unwrap(c command) (command, bool) {
	p, ok := precommands[c.name]
	if !ok {
		return command{}, false
	}
	args, operands := c.args(), p.operands
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1+operands < len(args) {
				rest := args[i+1+operands:]
				return command{name: executableName(rest[0]), argv: rest}, true
			}
			return command{}, false
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if slices.Contains(p.valueOpts, a) {
				i++ // its value
			}
		case c.name == "env" && strings.Contains(a, "="):
			// NAME=value
		case operands > 0:
			operands--
		default:
			return command{name: executableName(a), argv: args[i:]}, true
		}
	}
	return command{}, false
}

// riskWarning returns the one warning a leaf can carry: every warning keys
// off a distinct set of command names, so a leaf never earns two, and the
// result needs no deduplication.
func riskWarning(c command, who string) string {
	switch {
	case shells[c.name]:
		content := "shell scripts"
		if hasFlag(c.args(), "-c") {
			content = "shell command strings"
		}
		return who + ": invokes " + c.name + "; " + content + " are trusted executable content and are not sandboxed by command-template argv splitting. Mitigation: keep scripts local, reviewed, and parameterized with explicit placeholders."
	case jsRuntimes[c.name] && evalsCode(c):
		return who + ": invokes " + c.name + " eval mode; " + evalAdvice
	case scriptRuntimes[c.name] && evalsCode(c):
		return who + ": invokes " + c.name + " code-eval mode; " + evalAdvice
	case removesPaths(c):
		return who + ": removes filesystem paths; verify placeholders and paths before running trusted destructive commands. Mitigation: constrain path placeholders and consider dry-run or explicit confirmation."
	case writesBroadPaths(c):
		return who + ": mutates broad filesystem paths; verify placeholders and paths before running trusted commands. Mitigation: constrain path placeholders and prefer narrow source/destination paths."
	}
	return ""
}

const evalAdvice = "code strings are trusted executable content and are not sandboxed. Mitigation: prefer a checked-in script file or keep eval input fixed and reviewed."

var (
	shells         = wordSet("bash", "sh", "zsh", "fish")
	jsRuntimes     = wordSet("node", "deno", "bun")
	scriptRuntimes = wordSet("python", "python3", "perl", "ruby")
	pathCopiers    = wordSet("mv", "cp", "rsync")
	externalTools  = wordSet("gh", "glab", "hub", "kubectl", "terraform")
	jsPackagers    = wordSet("npm", "pnpm", "yarn")
	packageManager = wordSet("npm", "pnpm", "yarn", "pip", "pip3", "cargo")
	networkTools   = wordSet("curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "telnet", "ftp")
	gitNetwork     = wordSet("clone", "fetch", "pull", "push", "ls-remote")
	secretTools    = wordSet("pass", "gpg", "ssh-add")

	platformCommands = wordSet("systemctl", "launchctl", "osascript", "open", "xdg-open",
		"powershell", "pwsh", "cmd.exe", "apt", "apt-get", "dnf", "yum", "brew",
		"pacman", "apk", "xclip", "wl-copy")

	// gitValueFlags are git's global options whose value is the next word,
	// so that `git -C repo push` finds the subcommand push, not repo.
	gitValueFlags = wordSet("-C", "-c", "--git-dir", "--work-tree", "--namespace",
		"--super-prefix", "--config-env")
)

func wordSet(words ...string) map[string]bool {
	set := make(map[string]bool, len(words))
	for _, w := range words {
		set[w] = true
	}
	return set
}

// executableName is the lowercased basename of the command word. Both
// separators count so a Windows path (C:\...\cmd.exe) names its program too,
// and case is folded because case-insensitive filesystems run Bash as bash.
func executableName(word string) string {
	if i := strings.LastIndexAny(word, `/\`); i >= 0 {
		word = word[i+1:]
	}
	return strings.ToLower(word)
}

func evalsCode(c command) bool {
	switch {
	case shells[c.name]:
		return hasFlag(c.args(), "-c")
	case jsRuntimes[c.name]:
		return hasFlag(c.args(), "-e", "--eval")
	case scriptRuntimes[c.name]:
		return hasFlag(c.args(), "-c", "-e")
	}
	return false
}

func removesPaths(c command) bool {
	if c.name == "find" {
		return hasFlag(c.args(), "-delete")
	}
	if c.name != "rm" {
		return false
	}
	for _, a := range c.args() {
		if isForceOrRecursive(a) || isRiskyPath(a) {
			return true
		}
	}
	return false
}

// isForceOrRecursive reports an rm option that removes trees or silences
// prompts: a short cluster holding r, R or f (-rf, -vR), or its long form.
func isForceOrRecursive(arg string) bool {
	if strings.HasPrefix(arg, "--") {
		return arg == "--recursive" || arg == "--force"
	}
	return len(arg) > 1 && arg[0] == '-' && strings.ContainsAny(arg[1:], "rRf")
}

func writesBroadPaths(c command) bool {
	if !pathCopiers[c.name] {
		return false
	}
	for _, a := range c.args() {
		if isRiskyPath(a) {
			return true
		}
	}
	return false
}

// isRiskyPath reports a path that reaches beyond the working tree (absolute,
// home, a bare parent) or that still holds a brace, i.e. an unresolved
// placeholder whose final value nobody has seen.
func isRiskyPath(arg string) bool {
	switch arg {
	case "/", "~", "./", "../":
		return true
	}
	return strings.Contains(arg, "{") || strings.HasPrefix(arg, "~/") || strings.HasPrefix(arg, "/")
}

func changesExternalState(c command) bool {
	switch {
	case externalTools[c.name]:
		return true
	case c.name == "git":
		return gitSubcommand(c.args()) == "push"
	case jsPackagers[c.name]:
		// Any position: `yarn workspace app publish` and `npm --tag x publish`
		// publish as surely as `npm publish`.
		return hasWord(c.args(), "publish", "login", "logout", "deprecate")
	}
	return false
}

func usesNetwork(c command) bool {
	switch {
	case networkTools[c.name], packageManager[c.name]:
		return true
	case c.name == "git":
		return gitNetwork[gitSubcommand(c.args())]
	}
	return false
}

// gitSubcommand is the first word after git's global options, lowercased,
// or "" when there is none. Only the subcommand counts, so a commit message
// such as `git commit -m push` is not mistaken for a push.
func gitSubcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case gitValueFlags[a]:
			i++
		case !strings.HasPrefix(a, "-"):
			return strings.ToLower(a)
		}
	}
	return ""
}

func runsLong(c command) bool {
	switch {
	case c.name == "sleep", c.name == "watch":
		return true
	case c.name == "tail" && hasFlag(c.args(), "-f", "-F", "--follow"):
		return true
	}
	return hasWord(c.args(), "--watch", "--serve", "serve")
}

func touchesSecrets(c command) bool {
	if secretTools[c.name] {
		return true
	}
	for _, w := range c.argv {
		if mentionsSecret(w) {
			return true
		}
	}
	return false
}

// secretWords are matched as whole segments of a word (see isSecretDelim),
// so that GITHUB_TOKEN and {api_key} match while tokenizer does not.
var secretWords = []string{
	"secret", "token", "password", "passwd", "credential",
	"api_key", "api-key", "apikey", "private_key", "private-key", "privatekey",
	".env", "ssh_key", "ssh-key", "sshkey",
}

// mentionsSecret reports whether word holds one of secretWords, ignoring
// case, with a delimiter or the word's edge on both sides.
func mentionsSecret(word string) bool {
	if len(word) < 4 { // shorter than the shortest secret word (.env)
		return false
	}
	w := strings.ToLower(word) // no allocation for the common all-lowercase ASCII word
	for _, s := range secretWords {
		for off := 0; ; {
			i := strings.Index(w[off:], s)
			if i < 0 {
				break
			}
			start, end := off+i, off+i+len(s)
			if delimitedBefore(w, start) && delimitedAfter(w, end) {
				return true
			}
			off = start + 1
		}
	}
	return false
}

func delimitedBefore(w string, i int) bool {
	r, n := utf8.DecodeLastRuneInString(w[:i])
	return n == 0 || isSecretDelim(r)
}

func delimitedAfter(w string, i int) bool {
	r, n := utf8.DecodeRuneInString(w[i:])
	return n == 0 || isSecretDelim(r)
}

// isSecretDelim is the original's delimiter set ({}._-/ and whitespace)
// plus '=': matching runs on substituted argv, where an option such as
// --api-key=VALUE is the main remaining sign of a secret.
func isSecretDelim(r rune) bool {
	return strings.ContainsRune("{}._-/=", r) || unicode.IsSpace(r)
}

// hasFlag reports whether args hold one of flags. A one-letter flag also
// counts inside a cluster of letters (-lc holds -c), as shells and
// interpreters parse them; a long flag may carry its value after '='.
func hasFlag(args []string, flags ...string) bool {
	for _, a := range args {
		for _, f := range flags {
			if matchesFlag(a, f) {
				return true
			}
		}
	}
	return false
}

func matchesFlag(arg, flag string) bool {
	if arg == flag {
		return true
	}
	if len(flag) == 2 {
		return isLetterCluster(arg) && strings.IndexByte(arg[1:], flag[1]) >= 0
	}
	rest, ok := strings.CutPrefix(arg, flag)
	return ok && strings.HasPrefix(rest, "=")
}

func isLetterCluster(arg string) bool {
	if len(arg) < 2 || arg[0] != '-' {
		return false
	}
	for i := 1; i < len(arg); i++ {
		if b := arg[i] | 0x20; b < 'a' || b > 'z' {
			return false
		}
	}
	return true
}

// hasWord reports whether any arg equals one of words, ignoring case.
func hasWord(args []string, words ...string) bool {
	for _, a := range args {
		for _, w := range words {
			if strings.EqualFold(a, w) {
				return true
			}
		}
	}
	return false
}

// riskCheckList is riskChecks in riskOrder, so the per-leaf loop needs no
// map lookups.
var riskCheckList = func() []func(command) bool {
	out := make([]func(command) bool, len(riskOrder))
	for i, l := range riskOrder {
		out[i] = riskChecks[l]
	}
	return out
}()
