"""Stackwright's version: one constant, read by the package build and the ApplySet tooling label."""

VERSION = "0.1.0"
