//go:build !race

package supervisor

const raceBuild = false
