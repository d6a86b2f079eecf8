package composelab

import "path/filepath"

// root is the repository: compose.yaml's directory.
var root, _ = filepath.Abs(filepath.Join("..", ".."))

// modelNames are the three services, in the catalog's order.
var modelNames = []string{"unbounded", "semaphore", "pipeline"}
