// The version of the widgets as published: the site serves each version's files under
// v<VERSION>/ beside the newest at its root, and the widget reference gives instructors that
// versioned URL, so that notes embedding a widget keep working when the page changes. Raise it
// when a change would break someone's embedded widget (an attribute renamed or removed).
export const VERSION = '0.1.0';
