//go:build !race

package web

const raceBuild = false
