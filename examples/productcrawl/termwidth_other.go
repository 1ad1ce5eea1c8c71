//go:build !unix

package main

import "os"

// termWidth returns 0: the status line keeps its default width.
func termWidth(*os.File) int { return 0 }
