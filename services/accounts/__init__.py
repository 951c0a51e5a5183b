"""Accounts: people, bot accounts, system bot accounts, scoped API tokens and
the auth interceptor every public service uses (``services.platform.auth``)."""
