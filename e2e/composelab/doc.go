// Package composelab tests the compose lab as a user starts it: the
// README's `docker compose up --build` from compose.yaml, against the
// published ports, every scenario the catalog marks "in the lab" run inside
// compose, and the lab's life cycle (rebuild, restart, removal). It needs a
// Docker engine with Compose and the pinned images (.ci/labimages builds
// local ones where there is no registry): `make lab-test` (build tag
// composelab). docs/lab.md, "What was verified", says what it checks.
package composelab
