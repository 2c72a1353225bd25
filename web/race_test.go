//go:build race

package web

// raceBuild is true under -race (see TestAdminModeration).
const raceBuild = true
