package lazyre

import (
	"regexp"
	"testing"
)

// classPatterns are matched from a table; each must match as regexp does.
var classPatterns = []string{
	`^[A-Za-z0-9_.-]+$`,
	`^[A-Za-z_][A-Za-z0-9_.-]*$`,
	`^[A-Za-z][A-Za-z0-9_.:-]*$`,
	`^[A-Za-z0-9_/:=.,@%+\-]+$`,
	`^[a-z]*$`,
	`^[-a]+$`,
	`^[a-]+$`,
	`^[!--]+$`,
	`^[\]\\\^]+$`,
	`^[ ~][a.]+$`,
	`^[x][y]*$`,
}

// otherPatterns go to regexp.
var otherPatterns = []string{
	`^[a-z]+`, `[a-z]+$`, `^[^a-z]+$`, `^[]a]+$`, `^[a-z]$`, `^[a-z]?$`, `^\d+$`, `^[\d]+$`,
	`^[a-z-0]+$`, `^[z-a]+$`, `^[[:alpha:]]+$`, `^[a][b][c]*$`, `^[a]+\$`, `(?i)^[a]+$`, `^[a]{2}$`,
	`^[é]+$`, `^[a]+$$`, `^[\n]+$`, `^[a` + "\t" + `]+$`, `^[a]+[b]+$`, `^(a)+$`, `^[a]*[b]$`,
}

var classInputs = []string{
	"", "a", "A", "abc", "run-1.x_y", "-", "_a", "1a", "a b", "a\n", "\na", "a\x00", "é", "aé", "a\xff", "\xff",
	"x", "xy", "xyy", "xx", "y", "]", "\\", "^", "!", "-!", ",", "~a.", " a", "~", "a:b=c,d@e%f+g/h", "Ab9.:-",
}

func TestClassPatternsMatchAsRegexp(t *testing.T) {
	for _, src := range classPatterns {
		c := parseClasses(src)
		if c == nil {
			t.Errorf("%s: not read as classes", src)
			continue
		}
		re := regexp.MustCompile(src)
		for _, s := range classInputs {
			if got, want := c.match(s), re.MatchString(s); got != want {
				t.Errorf("%s on %q: %v, regexp %v", src, s, got, want)
			}
		}
		for b := 0; b < 256; b++ {
			for _, s := range []string{string(rune(b)), string([]byte{byte(b)}), "a" + string([]byte{byte(b)}), string([]byte{byte(b)}) + "a"} {
				if got, want := c.match(s), re.MatchString(s); got != want {
					t.Errorf("%s on %q: %v, regexp %v", src, s, got, want)
				}
			}
		}
	}
	for _, src := range otherPatterns {
		if parseClasses(src) != nil {
			t.Errorf("%s: read as classes", src)
		}
	}
}

func TestMatchStringFallsBack(t *testing.T) {
	r := New(`^\d+$`)
	if !r.MatchString("12") || r.MatchString("1a") {
		t.Fatal(`^\d+$ wrong`)
	}
	if r.re == nil || r.classes != nil {
		t.Fatal(`^\d+$ not compiled`)
	}
	k := New(`^[a-z]+$`)
	if !k.MatchString("ab") || k.MatchString("a1") || k.re != nil {
		t.Fatal(`^[a-z]+$ compiled or wrong`)
	}
	if got := k.FindStringSubmatch("ab"); len(got) != 1 || got[0] != "ab" {
		t.Fatalf("FindStringSubmatch %q", got)
	}
}

func FuzzClasses(f *testing.F) {
	for _, src := range append(classPatterns, otherPatterns...) {
		f.Add(src, "abc")
	}
	f.Fuzz(func(t *testing.T, src, s string) {
		c := parseClasses(src)
		if c == nil {
			return
		}
		re, err := regexp.Compile(src)
		if err != nil {
			t.Fatalf("%q read as classes but regexp refuses it: %v", src, err)
		}
		if got, want := c.match(s), re.MatchString(s); got != want {
			t.Fatalf("%q on %q: %v, regexp %v", src, s, got, want)
		}
	})
}
