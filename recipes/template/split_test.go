package template

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestSplitWords covers every splitting rule of docs/command-templates.md
// (section "Splitting").
func TestSplitWords(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		// whitespace
		{"empty", "", nil},
		{"only blanks", " \t\n ", nil},
		{"one word", "echo", []string{"echo"}},
		{"spaces", "a b  c", []string{"a", "b", "c"}},
		{"leading and trailing blanks", "  a b  ", []string{"a", "b"}},
		{"tabs", "a\tb\t\tc", []string{"a", "b", "c"}},
		{"newlines", "a\nb\n\nc\n", []string{"a", "b", "c"}},
		{"mixed blanks", " a \t\n b\t\n", []string{"a", "b"}},
		// Not in the docs (which list spaces, tabs and newlines), and unlike
		// sh, where \r is an ordinary character: Split treats it as a blank.
		{"carriage return separates", "a\r\nb\rc", []string{"a", "b", "c"}},
		{"other unicode spaces are not blanks", "a\u00a0b a\u2003b", []string{"a\u00a0b", "a\u2003b"}},
		{"vertical tab and form feed are not blanks", "a\vb a\fb", []string{"a\vb", "a\fb"}},

		// single quotes: literal, no escapes
		{"single quoted spaces", "'a b'  c", []string{"a b", "c"}},
		{"single quoted backslash stays", `'a\b'`, []string{`a\b`}},
		{"single quoted trailing backslash", `'a\'`, []string{`a\`}},
		{"single quoted double backslash", `'\\'`, []string{`\\`}},
		{"single quoted double quote", `'say "hi"'`, []string{`say "hi"`}},
		{"single quoted dollar and backtick", "'$x `y`'", []string{"$x `y`"}},
		{"single quoted backslash newline stays", "'a\\\nb'", []string{"a\\\nb"}},
		{"single quoted blanks", "'\t \n'", []string{"\t \n"}},

		// double quotes
		{"double quoted spaces", `"a b" c`, []string{"a b", "c"}},
		{"double quoted escaped backslash", `"a\\b"`, []string{`a\b`}},
		{"double quoted escaped quote", `"a\"b"`, []string{`a"b`}},
		{"double quoted escaped dollar", `"\$HOME"`, []string{`$HOME`}},
		{"double quoted escaped backtick", "\"\\`x\\`\"", []string{"`x`"}},
		{"double quoted other backslash kept", `"a\b\n\t\'"`, []string{`a\b\n\t\'`}},
		{"double quoted backslash before space kept", `"a\ b"`, []string{`a\ b`}},
		{"double quoted backslash before brace kept", `"\{x}"`, []string{`\{x}`}},
		{"double quoted four backslashes", `"\\\\"`, []string{`\\`}},
		{"double quoted three backslashes then quote", `"\\\""`, []string{`\"`}},
		{"double quoted single quote", `"it's"`, []string{"it's"}},
		{"double quoted newline kept", "\"a\nb\"", []string{"a\nb"}},
		// As in sh; the docs' list of escapes inside "…" omits newline.
		{"double quoted backslash newline removed", "\"a\\\nb\"", []string{"ab"}},
		{"double quoted dollar and backtick literal", "\"$x `y`\"", []string{"$x `y`"}},

		// backslash outside quotes
		{"backslash escapes letter", `\a\b`, []string{"ab"}},
		{"backslash space joins", `a\ b c`, []string{"a b", "c"}},
		{"backslash tab joins", "a\\\tb", []string{"a\tb"}},
		{"backslash backslash", `a\\b`, []string{`a\b`}},
		{"backslash single quote", `it\'s`, []string{"it's"}},
		{"backslash double quote", `\"a\"`, []string{`"a"`}},
		{"backslash dollar", `\$x`, []string{"$x"}},
		{"backslash brace", `\{x\}`, []string{"{x}"}},
		{"backslash newline removed", "a\\\nb", []string{"ab"}},
		{"backslash newline between words", "a \\\n b", []string{"a", "b"}},
		{"backslash newline alone", "\\\n", nil},
		{"backslash newline at end", "a\\\n", []string{"a"}},
		{"backslash escaped space only", `\ `, []string{" "}},

		// trailing lone backslash
		{"trailing lone backslash", `a\`, []string{`a\`}},
		{"lone backslash", `\`, []string{`\`}},
		{"lone backslash word", `a \`, []string{"a", `\`}},
		{"escaped backslash at end", `a\\`, []string{`a\`}},
		{"three backslashes at end", `a\\\`, []string{`a\\`}},

		// empty words
		{"empty single quotes", "''", []string{""}},
		{"empty double quotes", `""`, []string{""}},
		{"empty words between", `a '' "" b`, []string{"a", "", "", "b"}},
		{"two empty words", `'' ''`, []string{"", ""}},
		{"empty quotes glued", `''""`, []string{""}},
		{"empty quotes after text", `a''`, []string{"a"}},
		{"empty quotes before text", `""a`, []string{"a"}},

		// adjacent parts form one word
		{"adjacent quoted parts", `a'b'"c"`, []string{"abc"}},
		{"adjacent with escape", `'a'"b"c\ d`, []string{"abc d"}},
		{"quoted middle", `--name="a b"`, []string{"--name=a b"}},
		{"quote switch", `'a"b'"c'd"`, []string{`a"bc'd`}},

		// braces are not special
		{"braces with space", "{foo bar}", []string{"{foo", "bar}"}},
		{"placeholder in word", "--file={file}", []string{"--file={file}"}},
		{"dollar placeholder", "${x}", []string{"${x}"}},
		{"quoted awk program", `awk '{print $1}'`, []string{"awk", "{print $1}"}},
		{"quoted placeholder with spaces", `"{index + 1}"`, []string{"{index + 1}"}},
		{"empty braces", "find . -exec rm {} +", []string{"find", ".", "-exec", "rm", "{}", "+"}},

		// shell metacharacters are ordinary
		{"metacharacters", "a;b|c&d>e<f*g?h~i#j", []string{"a;b|c&d>e<f*g?h~i#j"}},
		{"comment is not a comment", "a #b", []string{"a", "#b"}},

		// UTF-8 is untouched
		{"utf8 words", "héllo wörld 日本語", []string{"héllo", "wörld", "日本語"}},
		{"utf8 quoted", `"日本 語" '€ $'`, []string{"日本 語", "€ $"}},
		{"backslash before multibyte", `\é\日`, []string{"é日"}},
		{"double quoted backslash before multibyte", `"\é"`, []string{`\é`}},
		{"emoji", "🙂 a🙂b", []string{"🙂", "a🙂b"}},
		{"invalid utf8 bytes", "\xff\xfe a", []string{"\xff\xfe", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Split(tt.in)
			if err != nil {
				t.Fatalf("Split(%q): unexpected error %v", tt.in, err)
			}
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Split(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSplitErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"unterminated single", `echo 'abc`, "unterminated single quote"},
		{"lone single", `'`, "unterminated single quote"},
		{"unterminated double", `echo "abc`, "unterminated double quote"},
		{"lone double", `"`, "unterminated double quote"},
		{"escaped closing double", `"abc\"`, "unterminated double quote"},
		{"backslash does not escape in single", `'abc\'def'`, "unterminated single quote"},
		{"unterminated after word", `a'b'"`, "unterminated double quote"},
		{"double inside single does not close", `'a"`, "unterminated single quote"},
		{"single inside double does not close", `"a'`, "unterminated double quote"},
		{"unterminated with newline", "\"a\nb", "unterminated double quote"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Split(tt.in)
			if err == nil {
				t.Fatalf("Split(%q) = %q, want an error containing %q", tt.in, got, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Split(%q) error = %q, want it to contain %q", tt.in, err, tt.want)
			}
			if got != nil {
				t.Errorf("Split(%q) returned words %q along with an error", tt.in, got)
			}
		})
	}
}

// TestSplitLeafErrors checks that a split error surfaces from Parse as an
// *Error naming the template.
func TestSplitLeafErrors(t *testing.T) {
	for _, in := range []string{`echo 'a`, `echo "a`} {
		_, err := Parse(in)
		var te *Error
		if err == nil || !errors.As(err, &te) {
			t.Fatalf("Parse(%q) error = %v, want an *Error", in, err)
		}
		if te.Path != "template" || !strings.Contains(te.Msg, "unterminated") {
			t.Errorf("Parse(%q) error = %+v, want path template and an unterminated-quote message", in, te)
		}
	}
}
