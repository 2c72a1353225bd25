//go:build race

package balance_test

// raceBuild is true under -race, where the balance smoke test takes
// minutes for no gain (it is one goroutine): make test runs it apart.
const raceBuild = true
