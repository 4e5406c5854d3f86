//go:build purego

package hnsw

// simdBuild is false when the package is built with the purego tag: every
// distance then uses the scalar loops.
const simdBuild = false

var simdCPU = false
