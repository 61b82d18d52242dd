"""The iOS persona of the simulated phone: XCUITest/WebDriverAgent shapes over the same apps (issue 11)."""
