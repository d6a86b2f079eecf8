// Package scenario describes, checks and runs the scenarios of the catalog in
// lab/scenario/catalog: a scenario names its targets, the service knobs it
// sets, one or more phases of load (or of in-process tasks), the observation
// it expects and the board panels to look at. A Runner starts the services
// (package local) or uses the lab's URLs, runs every phase against every
// target with package measure, and writes JSON, Markdown and HTML results.
package scenario
