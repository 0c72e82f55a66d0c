"""Your steps (the page's "you"), one module per section of the page: your Targets (`targets`),
first contact (`first_contact`), check that it worked (`check_it_worked`)."""
