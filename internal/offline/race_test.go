//go:build race

package offline_test

// raceBuild is true under -race, where the 1,600-fight balance test takes
// minutes for no gain (it is one goroutine): make test runs it apart.
const raceBuild = true
