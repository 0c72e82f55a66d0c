"""solar-controller-manager's steps, one module per topic of the page: the credential it creates
(`credential`), the condition's message (`condition`), rotation and expiry (`rotation`), a
credential withheld or withdrawn (`withdrawal`), other Targets left as they were
(`other_targets`), refused token requests and their backoff (`mint_failures`), the Profile
controller's bindings (`bindings`)."""
