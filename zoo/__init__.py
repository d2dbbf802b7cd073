"""The checkpoint zoo (issue: zoo): publish, index, verify and load run folders by id."""
