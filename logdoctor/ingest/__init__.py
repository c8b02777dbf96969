"""Ingest: bytes to records. Sources, format sniffing, parsers, field aliases, chunked and bounded-memory reading."""
