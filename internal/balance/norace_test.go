//go:build !race

package balance_test

const raceBuild = false
