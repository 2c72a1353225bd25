//go:build !race

package offline_test

const raceBuild = false
