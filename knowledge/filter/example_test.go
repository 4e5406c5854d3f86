package filter_test

import (
	"fmt"

	"github.com/pi-actors/pi-actors/knowledge/filter"
)

func Example() {
	var d filter.Domains
	d.Set("code").Add(filter.Tokens("func retryWithBackoff(policy RetryPolicy)")...)
	d.Set("history").Add(filter.Tokens("run 42 failed: backoff exhausted")...)

	fmt.Println(d.MayMatch("code", "retry"), d.MayMatch("history", "retry"))
	fmt.Println(d.AlsoExistsIn("backoff", "code"))

	// Later, from the store's complete key list:
	_ = d.Set("code").Rebuild(filter.Tokens("func retryWithBackoff(policy RetryPolicy)"))
	fmt.Println(d.Set("code").Stats().Keys)
	// Output:
	// true false
	// [history]
	// 7
}
