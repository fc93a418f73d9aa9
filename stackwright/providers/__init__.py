"""Providers: the code that turns a desired object into a live one in some system.

Each provider sits below the engine and above `stackwright.model` / `stackwright.errors`.
A provider never imports the engine, the CLI or the state store: the engine hands it
plain objects and gets back live objects or errors from the provider's own tree.
"""
