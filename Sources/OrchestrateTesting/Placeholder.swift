import Store
