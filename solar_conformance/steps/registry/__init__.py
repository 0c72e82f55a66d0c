"""The render registry as the page's regcred sees it, one module per kind of attempt: pulls
(`pulls`), writes (`writes`), the catalog and what it lists (`catalog`)."""
